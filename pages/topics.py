"""All topics as a table, one topic in detail, the hierarchy, and how topics relate."""

import streamlit as st

from explorer.node_ids import OUTLIER_ID, id_order, level_of
from explorer.view.charts.topics import (
    hierarchy_tree,
    intertopic_map,
    keyword_weights,
    similarity_heatmap,
)
from explorer.view.store.nodes import available_levels, opened_by
from explorer.view.store.topics import node_table, topic_name, topic_table
from explorer.view.text import counted, csv_text, md, md_format, shorten
from explorer.view.ui import state
from explorer.view.ui.data import colors, current, per_view
from explorer.view.ui.router import ensure_router
from explorer.view.ui.widgets.pickers import level_picker, query_select, switch_to
from explorer.view.ui.widgets.tables import TABLE_COLUMNS, node_links, paper_table

ensure_router()
# Characters of a representative paper's abstract shown under its title.
ABSTRACT_PREVIEW_CHARS = 220


def _members(data, topic: str):
    """A topic's papers, subtopic by subtopic (in id order), most probable first: kept per
    view, as a large topic at a million papers is ~400,000 rows to select and sort."""
    members = data.papers[data.papers["topic_id"] == topic]
    subtopics = sorted(members["subtopic_id"].unique(), key=lambda s: id_order(s) if s else ())
    rank = members["subtopic_id"].map({s: i for i, s in enumerate(subtopics)})
    return members.assign(order=rank).sort_values(
        ["order", "probability"], ascending=[True, False], kind="stable"
    )


data = current()
topics = data.topics
real = topics[topics["topic_id"] != OUTLIER_ID]

st.title("Topics")
level = level_picker(data)
st.dataframe(
    node_table(data.nodes, level),
    hide_index=True,
    column_config={
        "share": st.column_config.NumberColumn(format="percent"),
        "stability": st.column_config.NumberColumn(format="%.2f"),
        "coherence": st.column_config.NumberColumn(
            format="%.3f",
            help="NPMI of the node's top 10 words over this corpus's abstracts (-1 to 1); "
            "below 0 the words meet less often than chance: marked low coherence",
        ),
    },
    height=300,
)
st.download_button(
    "Download topic table (CSV)",
    csv_text(topic_table(topics, data.nodes)),
    file_name=f"{data.corpus}-topics.csv",
    mime="text/csv",
)

ids = real["topic_id"].tolist()  # text ids, in numeric order (the table's)
topic = (
    query_select(
        "Topic",
        ids,
        state.TOPIC_DETAIL,
        format_func=topic_name(topics),  # no placeholder: it names the topic shown below
        version=data.curation or None,
    )
    or ids[0]
)
row = topics[topics["topic_id"] == topic].iloc[0]
members = per_view(data, _members, topic)
st.subheader(md_format("Topic {id}: {label}", id=topic, label=row["label"]), anchor=False)
st.caption(
    md_format(
        "{papers} ({share:.1%} of the corpus)",
        papers=counted(int(row["size"]), "paper", "papers"),
        share=row["share"],
    )
)
nodes = data.nodes.set_index("node_id")
area = str(row["area_id"])
if "area" in available_levels(data.nodes) and area in nodes.index:
    st.markdown(md_format("**Area {id}:** {label}", id=area, label=nodes.loc[area, "long_label"]))
st.markdown(md_format("**Label phrases:** {label}", label=row["long_label"]))
subtopics = data.nodes[data.nodes["parent_id"] == topic]
if len(subtopics):
    st.markdown(md_format("**{n} subtopics**", n=len(subtopics)))
    st.dataframe(
        subtopics[["node_id", "long_label", "size"]].rename(
            columns={"node_id": "subtopic", "long_label": "label"}
        ),
        hide_index=True,
        key="subtopics",
    )
elif note := nodes.loc[str(topic), "note"]:
    st.caption(md_format("No subtopics: {why}.", why=note))


left, right = st.columns(2)
with left:
    st.markdown("**Keywords**")
    st.plotly_chart(keyword_weights(list(row["keywords"]), list(row["keyword_weights"])), key="kw")
with right:
    st.markdown("**Representative papers**")
    for pid in row["representative_ids"]:
        paper = data.papers.iloc[data.row_of([pid])[0]]
        st.text(paper["title"])
        st.caption(md(shorten(paper["abstract"], ABSTRACT_PREVIEW_CHARS)))
    hierarchy = data.hierarchy
    if len(hierarchy):
        parent = row["parent_id"]
        node = hierarchy[hierarchy["parent_id"] == parent]
        if len(node):
            # The merge tree counts topics as numbers; the tables hold them as text.
            present = set(topics["topic_id"])  # a topic merged away by curation is gone
            siblings = [
                str(t) for t in node.iloc[0]["topics"] if str(t) != topic and str(t) in present
            ]
            # The merge tree of topic centroids, not the area level (a corpus may have none).
            st.markdown("**In the topic tree**")
            merged = ", ".join(map(str, node.iloc[0]["topics"]))
            st.text(f"First merged into: {node.iloc[0]['parent_label']} (topics {merged})")
            if siblings:
                st.text("Merged there with: " + "; ".join(map(topic_name(topics), siblings[:6])))

st.markdown("**Papers in this topic**")
paper_table(
    members,
    data=data,
    key="topic_papers",
    height=300,
    columns=("subtopic_id", *TABLE_COLUMNS),
    download=f"{data.corpus}-topic-{topic}",
)

tab_tree, tab_map, tab_heat = st.tabs(
    ["Hierarchy", "Intertopic distance map", "Similarity heatmap"]
)
with tab_tree:
    split = "subtopic" in available_levels(data.nodes)
    with_subtopics = split and st.toggle("Show subtopics", key="tree_subtopics")
    st.caption("Each area with its topics, largest first. Click a bar to open it here.")
    event = st.plotly_chart(
        hierarchy_tree(data.nodes, colors(data), subtopics=with_subtopics),
        on_select="rerun",
        selection_mode="points",
        key="tree",
    )
    if points := (event.selection.points if event else []):
        clicked = str(points[0]["customdata"][0])
        opened, opened_level = opened_by(data.nodes, clicked, level_of(clicked))
        switch_to("pages/topics.py", {"topic": opened}, level=opened_level)
    links = node_links(data)
    st.dataframe(
        links,
        hide_index=True,
        key="tree_links",
        column_config={"open": st.column_config.LinkColumn("", display_text="open")},
    )
with tab_map:
    st.caption(
        "Each circle is a topic, marked with its id and sized by its papers; circles close "
        "together are topics whose papers are alike. Hover for a topic's label."
    )
    st.plotly_chart(intertopic_map(topics, colors(data)), key="intertopic")
with tab_heat:
    st.plotly_chart(similarity_heatmap(data.topic_similarity, topics), key="heat")
