import threading

from connector.binlog.queue import ChangeQueue


def test_put_all_hands_over_a_whole_message_in_order_and_counts_its_rows() -> None:
    queue: ChangeQueue[str] = ChangeQueue(max_rows=10)
    never = threading.Event()
    queue.put("a", 2, 100, never)
    queue.put_all(["b", "c"], 5, 100, never)
    assert queue.remaining == 3
    assert queue.take(0) == ["a", "b", "c"]
    assert queue.remaining == 10


def _blocks(queue: ChangeQueue[str], item: str, rows: int, size: int) -> threading.Event:
    """Put `item` from another thread; the event is set once the put returned."""
    done = threading.Event()

    def put() -> None:
        queue.put_all([item], rows, size, threading.Event())
        done.set()

    threading.Thread(target=put, daemon=True).start()
    return done


def test_put_all_waits_while_the_queue_is_full() -> None:
    queue: ChangeQueue[str] = ChangeQueue(max_rows=4)
    queue.put_all(["a", "b"], 4, 10, threading.Event())
    done = _blocks(queue, "c", 1, 10)
    assert not done.wait(0.3)  # full: the feeder waits for the engine
    assert queue.take(0) == ["a", "b"]
    assert done.wait(5)
    assert queue.take(0) == ["c"]


def test_wide_rows_fill_the_queue_by_bytes_before_rows() -> None:
    queue: ChangeQueue[str] = ChangeQueue(max_rows=20_000, max_bytes=1_000)
    queue.put("a", 1, 600, threading.Event())
    done = _blocks(queue, "b", 1, 600)  # 1,200 bytes would pass the bound: waits
    assert not done.wait(0.3)
    assert queue.take(0) == ["a"]
    assert done.wait(5)
    assert queue.take(0) == ["b"]


def test_an_item_larger_than_the_bound_goes_in_alone() -> None:
    queue: ChangeQueue[str] = ChangeQueue(max_rows=20_000, max_bytes=1_000)
    queue.put("huge", 1, 5_000, threading.Event())  # an empty queue takes it
    done = _blocks(queue, "next", 1, 10)
    assert not done.wait(0.3)
    assert queue.take(0) == ["huge"]
    assert done.wait(5)
