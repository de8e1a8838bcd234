"""What the queue tests read from the real RabbitMQ scripts/test-queues
started (RABBITMQ_URL), with pika: what a queue still holds and the
dead-letter records a queue received. Only once the run's workers have
stopped (their unacknowledged deliveries are back in the queue by then)."""

from __future__ import annotations

import json
from typing import Any

import pika
import pika.exceptions


def is_amqp(url: str | None) -> bool:
    return bool(url) and str(url).startswith(("amqp://", "amqps://"))


def _connection(url: str) -> pika.BlockingConnection:
    return pika.BlockingConnection(pika.URLParameters(url))


def held(url: str, queues: list[str]) -> int:
    """Messages the queues hold (a queue never declared holds none)."""
    total = 0
    conn = _connection(url)
    try:
        for name in queues:
            channel = conn.channel()
            try:
                total += channel.queue_declare(queue=name, passive=True).method.message_count
            except pika.exceptions.ChannelClosedByBroker as closed:
                if closed.reply_code != 404:
                    raise
    finally:
        conn.close()
    return total


def take(url: str, queue: str) -> list[tuple[dict[str, Any], Any]]:
    """Every message of ``queue`` (acknowledged: taken), as (properties, body)
    with a JSON body decoded."""
    out: list[tuple[dict[str, Any], Any]] = []
    conn = _connection(url)
    try:
        channel = conn.channel()
        while True:
            method, props, body = channel.basic_get(queue=queue, auto_ack=True)
            if method is None:
                break
            fields = {"content_type": props.content_type, "delivery_mode": props.delivery_mode,
                      "message_id": props.message_id, "headers": props.headers or {}}
            out.append((fields, json.loads(body) if props.content_type == "application/json" else body))
    finally:
        conn.close()
    return out


def durable(url: str, queue: str, arguments: dict[str, Any] | None = None) -> bool:
    """Whether ``queue`` exists and is durable: a redeclare as durable (with
    the queue's own ``arguments``) is refused (406) when it is not."""
    conn = _connection(url)
    try:
        channel = conn.channel()
        channel.queue_declare(queue=queue, passive=True)
        try:
            conn.channel().queue_declare(queue=queue, durable=True, arguments=arguments)
        except pika.exceptions.ChannelClosedByBroker as closed:
            if closed.reply_code == 406:
                return False
            raise
        return True
    finally:
        conn.close()
