"""The Redis transport, made to survive a malformed message.

kombu decodes a message's envelope itself, before Celery sees it, and a message that is not
JSON (half-written by a crashing producer, or pushed by hand) makes the worker's consumer
raise and exit ("Unrecoverable error: JSONDecodeError"). By then BRPOP has taken the message
off the queue, so the only loss would be the worker: here it is logged and dropped instead,
and the worker reads on. Likewise a broker that goes away while messages are unacknowledged
no longer ends the worker (see `Channel._connparams`). Registered for the `redis://`,
`rediss://` and `redis+socket://` URLs in config/celery.py.
"""

from __future__ import annotations

import logging

from kombu.exceptions import KombuError
from kombu.transport import redis
from kombu.transport.virtual import Empty

log = logging.getLogger(__name__)


class Channel(redis.Channel):
    def _connparams(self, asynchronous=False):
        # Broker lost: kombu closes the connection, then this channel, whose close puts the
        # unacknowledged messages back over a fresh client of the connection that is gone
        # ("'NoneType' object has no attribute 'hostname'", fatal to the worker). Say it as a
        # connection error, which the close ignores: Redis redelivers those messages anyway.
        if self.connection.client is None:
            raise redis.redis.exceptions.ConnectionError("the broker connection is closed")
        return super()._connparams(asynchronous=asynchronous)

    def _brpop_read(self, **options):
        try:
            return super()._brpop_read(**options)
        except (ValueError, TypeError, KombuError) as error:  # not an envelope at all
            if isinstance(error, self.connection_errors):
                raise
            log.error("dropped a malformed message from the broker: %r", error)
            raise Empty() from None


class Transport(redis.Transport):
    Channel = Channel


class SentinelChannel(Channel, redis.SentinelChannel):
    pass


class SentinelTransport(redis.SentinelTransport):
    Channel = SentinelChannel
