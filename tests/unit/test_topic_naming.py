"""Which topics spark-apply's --topics / --topic-pattern name (the batch job's and the
streaming query's one rule)."""

from spark_consumer.reading.planner import names_topic


def test_named_topics_win_over_the_pattern() -> None:
    assert names_topic("shop.shop.orders", ["shop.shop.orders"], r"nothing")
    assert not names_topic("shop.shop.items", ["shop.shop.orders"], r"shop\..+")


def test_the_pattern_matches_whole_names_only() -> None:
    assert names_topic("shop.shop.orders", None, r"shop\.shop\..+")
    assert not names_topic("xshop.shop.orders", None, r"shop\.shop\..+")
    assert not names_topic("shop.shop.orders", None, None)
