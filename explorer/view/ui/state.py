"""Session-state and query-parameter keys, defined once. Keys bound to the URL are short
because they are what users see (and share) in the address bar."""

CORPUS = "corpus"
TOPICS = "topics"
STATUS = "status"
VENUE = "venue"
YEARS = "years"
QUERY = "q"
MIN_PROBABILITY = "minp"
HIDE_OUTLIERS = "hide_outliers"
SHOW_HIDDEN = "show_hidden"
MIN_STABILITY = "min_stability"
TOPIC_DETAIL = "topic"
PAPER = "paper"
KEYWORDS = "kw"
TREND_TOPICS = "trend_topics"
RAW_COUNTS = "counts"
CLASS_DIMENSION = "by"
RISE_DIMENSION = "compare"
RISE_FROM = "from"
RISE_TO = "to"
ASK = "ask"
LEVEL = "level"
# Not in the URL: set for one rerun each.
ASK_CHANGED = "_ask_changed"  # the map's question changed: rerun the whole page once
HANDED_LEVEL = "_handed_level"  # the level a page switch opens the next page at
ANSWERED = "_answered"  # the last question this session was let ask (view/ui/fair.py)

# The longest free text a visitor's search or question may be (their UI says so): widget
# values arrive from any client, and a search string becomes part of per-run memo keys.
MAX_TEXT_CHARS = 500
