"""The Redis channel layer keeps idle sockets' consumers alive."""

from __future__ import annotations

import pytest
from channels.layers import get_channel_layer
from channels_redis.core import RedisChannelLayer
from channels_redis.utils import create_pool
from django.conf import settings

pytestmark = pytest.mark.skipif(not settings.REDIS_URL, reason="needs REDIS_URL (production mode)")


def test_redis_reads_wait_longer_than_the_layers_blocking_pop() -> None:
    # Otherwise a consumer with nothing to receive for a few seconds can die of a read timeout
    # (redis-py's default socket timeout equals channels-redis's blocking-pop timeout).
    layer = get_channel_layer()
    assert isinstance(layer, RedisChannelLayer)

    for host in layer.hosts:
        timeout = create_pool(host).make_connection().socket_timeout
        assert timeout is None or timeout > layer.brpop_timeout + 5
