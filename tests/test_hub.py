from datagen.records.hub import size_category


def test_size_category_buckets_follow_the_hub_names():
    assert [size_category(n) for n in (0, 999, 1_000, 99_999, 100_000, 9_999_999, 10_000_000)] == [
        "n<1K", "n<1K", "1K<n<10K", "10K<n<100K", "100K<n<1M", "1M<n<10M", "n>10M"]
