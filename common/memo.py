"""A bounded memo of answers that depend only on their key (and, where one is given, on a
scope object: answers computed for another scope are forgotten). The least recently asked go
first once it is full. Each process keeps its own, so nothing has to be invalidated across
processes; a key must name everything else the answer depends on."""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

V = TypeVar("V")


class Memo(Generic[V]):
    def __init__(self, size: int):
        self.size = size
        self._answers: OrderedDict[Hashable, V] = OrderedDict()
        self._lock = threading.Lock()
        self._scope: weakref.ref | None = None

    def get(self, key: Hashable, compute: Callable[[], V], *, scope: object = None) -> V:
        """The answer for `key`, computed (outside the lock) when it is not held."""
        with self._lock:
            if not self._in_scope(scope):
                self._answers.clear()
                self._scope = weakref.ref(scope)
            if key in self._answers:
                self._answers.move_to_end(key)
                return self._answers[key]
        answer = compute()
        with self._lock:
            if not self._in_scope(scope):
                return answer  # the scope changed meanwhile: this answer is already old
            self._answers[key] = answer
            if len(self._answers) > self.size:
                self._answers.popitem(last=False)
        return answer

    def _in_scope(self, scope: object) -> bool:
        """Whether the answers held were computed for `scope` (always, when none is given)."""
        return scope is None or (self._scope is not None and self._scope() is scope)
