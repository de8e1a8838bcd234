"""Fixtures of the queue tests: the real servers scripts/test-queues started.

REDIS_URL: Debian's redis-server (7.0); REDIS86_URL: redis >= 8.6 (ChasquiMQ);
RABBITMQ_URL: Debian's rabbitmq-server (3.10; Celery and Dramatiq on RabbitMQ).
A missing server fails the test that needs it (never a skip).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))


def _url(name: str) -> str:
    url = os.environ.get(name)
    if not url:
        pytest.fail(f"{name} is not set: run the queue tests through scripts/test-queues")
    return url


@pytest.fixture(scope="session")
def redis_url() -> str:
    return _url("REDIS_URL")


@pytest.fixture(scope="session")
def redis86_url() -> str:
    return _url("REDIS86_URL")


@pytest.fixture(scope="session")
def rabbitmq_url() -> str:
    return _url("RABBITMQ_URL")
