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
TOPIC_DETAIL = "topic"
PAPER = "paper"
