import threading

from connector.binlog.queue import ChangeQueue


def test_put_all_hands_over_a_whole_message_in_order_and_counts_its_rows() -> None:
    queue: ChangeQueue[str] = ChangeQueue(max_rows=10)
    never = threading.Event()
    queue.put("a", 2, never)
    queue.put_all(["b", "c"], 5, never)
    assert queue.remaining == 3
    assert queue.take(0) == ["a", "b", "c"]
    assert queue.remaining == 10


def test_put_all_waits_while_the_queue_is_full() -> None:
    queue: ChangeQueue[str] = ChangeQueue(max_rows=4)
    never = threading.Event()
    queue.put_all(["a", "b"], 4, never)
    done = threading.Event()

    def put_more() -> None:
        queue.put_all(["c"], 1, never)
        done.set()

    threading.Thread(target=put_more, daemon=True).start()
    assert not done.wait(0.3)  # full: the feeder waits for the engine
    assert queue.take(0) == ["a", "b"]
    assert done.wait(5)
    assert queue.take(0) == ["c"]
