"""All topics as a table, one topic in detail, the hierarchy, and how topics relate."""

import streamlit as st

from explorer.view import charts
from explorer.view.store import OUTLIER, topic_name, topic_table
from explorer.view.text import md, md_format, shorten
from explorer.view.ui import state
from explorer.view.ui.data import current
from explorer.view.ui.router import ensure_router
from explorer.view.ui.widgets import paper_table, query_select

ensure_router()
# Characters of a representative paper's abstract shown under its title.
ABSTRACT_PREVIEW_CHARS = 220

data = current()
topics = data.topics
real = topics[topics["topic_id"] != OUTLIER]

st.title("Topics")
st.dataframe(
    topic_table(topics),
    hide_index=True,
    column_config={"share": st.column_config.NumberColumn(format="percent")},
    height=300,
)
st.download_button(
    "Download topic table (CSV)",
    topic_table(topics).to_csv(index=False),
    file_name=f"{data.corpus}-topics.csv",
    mime="text/csv",
)

ids = [int(t) for t in real["topic_id"]]
topic = query_select("Topic", ids, state.TOPIC_DETAIL, format_func=topic_name(topics)) or ids[0]
row = topics[topics["topic_id"] == topic].iloc[0]
members = data.papers[data.papers["topic_id"] == topic]
st.subheader(md_format("Topic {id}: {label}", id=topic, label=row["label"]), anchor=False)
st.caption(md_format("{n} papers ({share:.1%} of the corpus)", n=row["size"], share=row["share"]))

left, right = st.columns(2)
with left:
    st.markdown("**Keywords**")
    st.plotly_chart(
        charts.keyword_weights(list(row["keywords"]), list(row["keyword_weights"])), key="kw"
    )
with right:
    st.markdown("**Representative papers**")
    by_id = data.papers.set_index("paper_id")
    for pid in row["representative_ids"]:
        paper = by_id.loc[pid]
        st.text(paper["title"])
        st.caption(md(shorten(paper["abstract"], ABSTRACT_PREVIEW_CHARS)))
    hierarchy = data.hierarchy
    if len(hierarchy):
        parent = row["parent_id"]
        node = hierarchy[hierarchy["parent_id"] == parent]
        if len(node):
            siblings = [t for t in node.iloc[0]["topics"] if t != topic]
            st.markdown("**In the hierarchy**")
            st.text(
                f"Parent: {node.iloc[0]['parent_label']} (merges topics {', '.join(map(str, node.iloc[0]['topics']))})"
            )
            if siblings:
                st.text("Closest topics: " + "; ".join(map(topic_name(topics), siblings[:6])))

st.markdown("**Papers in this topic**")
paper_table(
    members.sort_values("probability", ascending=False),
    data=data,
    key="topic_papers",
    height=300,
)

tab_tree, tab_map, tab_heat = st.tabs(
    ["Hierarchy", "Intertopic distance map", "Similarity heatmap"]
)
with tab_tree:
    if len(data.hierarchy):
        st.caption("Click a ring to zoom into that branch; click the centre to go back.")
        st.plotly_chart(charts.hierarchy_sunburst(data.hierarchy, topics), key="tree")
    else:
        st.info("A hierarchy needs at least two topics.")
with tab_map:
    st.plotly_chart(charts.intertopic_map(topics), key="intertopic")
with tab_heat:
    st.plotly_chart(charts.similarity_heatmap(data.topic_similarity, topics), key="heat")
