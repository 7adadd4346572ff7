"""common.memo: answers kept by key, the least recently asked forgotten first, and all of them
forgotten when the scope they were computed for changes."""

from common.memo import Memo


class Scope:
    pass


def test_it_answers_from_memory_and_forgets_the_least_recently_asked():
    memo: Memo[str] = Memo(2)
    computed = []

    def answer(key):
        def compute():
            computed.append(key)
            return key.upper()

        return memo.get(key, compute)

    assert [answer("a"), answer("b"), answer("a")] == ["A", "B", "A"]
    assert computed == ["a", "b"]
    answer("c")  # full: "b" was asked least recently
    answer("a")
    answer("b")
    assert computed == ["a", "b", "c", "b"]


def test_a_new_scope_forgets_every_answer_of_the_old_one():
    memo: Memo[int] = Memo(10)
    first, second = Scope(), Scope()
    calls = []

    def ask(scope):
        return memo.get("k", lambda: calls.append(scope) or len(calls), scope=scope)

    assert ask(first) == 1 and ask(first) == 1
    assert ask(second) == 2
    assert ask(first) == 3
    assert calls == [first, second, first]
