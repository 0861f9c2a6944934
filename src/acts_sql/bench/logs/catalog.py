"""The fixed vocabulary of the generated logs: services, routes, user agents, regions, errors."""

from __future__ import annotations

import random
from typing import Any

from pydantic import BaseModel, ConfigDict


class Route(BaseModel):
    model_config = ConfigDict(frozen=True)

    path: str
    method: str = "GET"
    weight: float = 1.0


class ServiceSpec(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    team: str
    tier: int
    language: str
    traffic: float
    """Share of requests (relative)."""
    deploys: float
    """Share of deployments (relative)."""
    latency_mu: float
    latency_sigma: float
    error_rate: float
    """Share of 5xx outside error bursts."""
    routes: tuple[Route, ...]
    failure_modes: tuple[str, ...]
    upstream: str

    def row(self, service_id: int) -> tuple[Any, ...]:
        return (service_id, self.name, self.team, self.tier, self.language)

    def pick_route(self, rng: random.Random, probe: bool) -> tuple[str, str]:
        if probe:
            return "/healthz", "GET"
        route = rng.choices(self.routes, weights=[r.weight for r in self.routes])[0]
        return route.path, route.method


def _routes(*items: tuple[str, str, float]) -> tuple[Route, ...]:
    return tuple(Route(path=p, method=m, weight=w) for p, m, w in items)


SERVICES: tuple[ServiceSpec, ...] = (
    ServiceSpec(name="gateway", team="platform", tier=1, language="go", traffic=9, deploys=6,
                latency_mu=2.6, latency_sigma=0.5, error_rate=0.004, upstream="auth",
                routes=_routes(("/", "GET", 5), ("/api/v1/session", "GET", 3),
                               ("/static/app.js", "GET", 2)),
                failure_modes=("upstream", "reset")),
    ServiceSpec(name="auth", team="identity", tier=1, language="go", traffic=7, deploys=8,
                latency_mu=3.3, latency_sigma=0.45, error_rate=0.006, upstream="profile",
                routes=_routes(("/api/v1/login", "POST", 3), ("/api/v1/token/refresh", "POST", 4),
                               ("/api/v1/logout", "POST", 1)),
                failure_modes=("database", "upstream")),
    ServiceSpec(name="catalog", team="discovery", tier=2, language="java", traffic=8, deploys=10,
                latency_mu=3.9, latency_sigma=0.6, error_rate=0.007, upstream="inventory",
                routes=_routes(("/api/v1/products", "GET", 5), ("/api/v1/products/:id", "GET", 6),
                               ("/api/v1/categories", "GET", 2)),
                failure_modes=("null", "database", "memory")),
    ServiceSpec(name="search", team="discovery", tier=2, language="java", traffic=8, deploys=11,
                latency_mu=4.6, latency_sigma=0.7, error_rate=0.012, upstream="catalog",
                routes=_routes(("/api/v1/search", "GET", 8), ("/api/v1/search/suggest", "GET", 4)),
                failure_modes=("upstream", "memory", "null")),
    ServiceSpec(name="cart", team="commerce", tier=1, language="python", traffic=6, deploys=9,
                latency_mu=3.6, latency_sigma=0.5, error_rate=0.008, upstream="inventory",
                routes=_routes(("/api/v1/cart", "GET", 4), ("/api/v1/cart/items", "POST", 3),
                               ("/api/v1/cart/items/:id", "DELETE", 1)),
                failure_modes=("database", "upstream", "key")),
    ServiceSpec(name="checkout", team="commerce", tier=1, language="python", traffic=4,
                deploys=12, latency_mu=5.2, latency_sigma=0.55, error_rate=0.015,
                upstream="payments",
                routes=_routes(("/api/v1/checkout", "POST", 4), ("/api/v1/checkout/:id", "GET", 2),
                               ("/api/v1/checkout/:id/confirm", "POST", 2)),
                failure_modes=("upstream", "database", "key")),
    ServiceSpec(name="payments", team="payments", tier=1, language="java", traffic=3, deploys=7,
                latency_mu=5.5, latency_sigma=0.5, error_rate=0.01, upstream="fraud-check",
                routes=_routes(("/api/v1/payments", "POST", 4), ("/api/v1/payments/:id", "GET", 2),
                               ("/api/v1/refunds", "POST", 1)),
                failure_modes=("upstream", "null", "database")),
    ServiceSpec(name="inventory", team="supply", tier=2, language="go", traffic=5, deploys=8,
                latency_mu=3.1, latency_sigma=0.5, error_rate=0.005, upstream="warehouse-db",
                routes=_routes(("/api/v1/stock/:sku", "GET", 6),
                               ("/api/v1/reservations", "POST", 2)),
                failure_modes=("database", "reset")),
    ServiceSpec(name="recommendations", team="discovery", tier=3, language="python", traffic=5,
                deploys=13, latency_mu=5.0, latency_sigma=0.8, error_rate=0.02,
                upstream="feature-store",
                routes=_routes(("/api/v1/recommendations", "GET", 5),
                               ("/api/v1/recommendations/similar", "GET", 2)),
                failure_modes=("memory", "upstream", "key")),
    ServiceSpec(name="shipping", team="supply", tier=2, language="java", traffic=3, deploys=6,
                latency_mu=4.2, latency_sigma=0.5, error_rate=0.006, upstream="carrier-api",
                routes=_routes(("/api/v1/shipments", "POST", 2),
                               ("/api/v1/shipments/:id", "GET", 4),
                               ("/api/v1/rates", "GET", 3)),
                failure_modes=("upstream", "null")),
    ServiceSpec(name="notifications", team="platform", tier=3, language="node", traffic=3,
                deploys=5, latency_mu=3.4, latency_sigma=0.6, error_rate=0.009,
                upstream="smtp-relay",
                routes=_routes(("/api/v1/notify", "POST", 3), ("/api/v1/preferences", "GET", 2)),
                failure_modes=("upstream", "reset", "type")),
    ServiceSpec(name="profile", team="identity", tier=2, language="node", traffic=4, deploys=7,
                latency_mu=3.5, latency_sigma=0.5, error_rate=0.005, upstream="users-db",
                routes=_routes(("/api/v1/me", "GET", 6), ("/api/v1/me", "PATCH", 1),
                               ("/api/v1/me/avatar", "GET", 2)),
                failure_modes=("database", "type")),
)  # fmt: skip


class UserAgent(BaseModel):
    model_config = ConfigDict(frozen=True)

    text: str
    weight: float
    bot: bool = False
    probe: bool = False


USER_AGENTS: tuple[UserAgent, ...] = (
    UserAgent(text="Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like "
              "Gecko) Chrome/122.0.0.0 Safari/537.36", weight=26),
    UserAgent(text="Mozilla/5.0 (Macintosh; Intel Mac OS X 14_3) AppleWebKit/605.1.15 (KHTML, "
              "like Gecko) Version/17.3 Safari/605.1.15", weight=12),
    UserAgent(text="Mozilla/5.0 (X11; Linux x86_64; rv:123.0) Gecko/20100101 Firefox/123.0",
              weight=6),
    UserAgent(text="Mozilla/5.0 (iPhone; CPU iPhone OS 17_3 like Mac OS X) AppleWebKit/605.1.15 "
              "(KHTML, like Gecko) Version/17.3 Mobile/15E148 Safari/604.1", weight=18),
    UserAgent(text="Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like "
              "Gecko) Chrome/122.0.0.0 Mobile Safari/537.36", weight=15),
    UserAgent(text="ShopApp/4.12.0 (iOS 17.3; iPhone15,2)", weight=7),
    UserAgent(text="ShopApp/4.11.2 (Android 14; SM-S918B) okhttp/4.12.0", weight=6),
    UserAgent(text="curl/8.5.0", weight=1.5, bot=True),
    UserAgent(text="python-requests/2.31.0", weight=2, bot=True),
    UserAgent(text="Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
              weight=2.5, bot=True),
    UserAgent(text="kube-probe/1.29", weight=4, probe=True),
)  # fmt: skip

REGIONS: tuple[tuple[str, float], ...] = (
    ("us-east-1", 30), ("us-west-2", 15), ("eu-west-1", 20), ("eu-central-1", 12),
    ("ap-southeast-1", 13), ("sa-east-1", 10),
)  # fmt: skip

DEPLOYERS = ("ci-bot", "ci-bot", "ci-bot", "alice", "bob", "chen", "dana")


class ErrorKind(BaseModel):
    model_config = ConfigDict(frozen=True)

    error_type: str
    template: str
    frames: tuple[str, ...]
    fatal: bool = False

    def message(self, rng: random.Random, spec: ServiceSpec) -> str:
        head = self.template.format(
            upstream=spec.upstream, ms=rng.choice((1000, 2000, 3000)), n=rng.randint(2, 64)
        )
        frames = "\n".join(f"  at {frame.format(service=spec.name)}" for frame in self.frames)
        return f"{self.error_type}: {head}\n{frames}"


ERROR_KINDS: dict[str, ErrorKind] = {
    "timeout": ErrorKind(
        error_type="TimeoutError",
        template="upstream {upstream} did not answer within {ms} ms",
        frames=("{service}.client.call (client.py:142)",
                "{service}.handlers.handle (handlers.py:57)"),
    ),
    "upstream": ErrorKind(
        error_type="UpstreamError",
        template="{upstream} returned 503 Service Unavailable",
        frames=("{service}.client.call (client.py:151)",
                "{service}.handlers.handle (handlers.py:61)"),
    ),
    "reset": ErrorKind(
        error_type="ConnectionResetError",
        template="connection to {upstream} reset by peer",
        frames=("net.conn.read (conn.go:212)", "{service}.proxy.forward (proxy.go:88)"),
    ),
    "database": ErrorKind(
        error_type="DatabaseError",
        template="deadlock detected while waiting for lock on row {n}",
        frames=("db.pool.execute (pool.py:203)", "{service}.repository.save (repository.py:44)"),
    ),
    "null": ErrorKind(
        error_type="NullPointerException",
        template="Cannot invoke \"Item.getPrice()\" because \"item\" is null",
        frames=("com.shop.{service}.PriceService.total (PriceService.java:77)",
                "com.shop.{service}.Controller.get (Controller.java:31)"),
    ),
    "memory": ErrorKind(
        error_type="OutOfMemoryError",
        template="Java heap space (requested {n} MB)",
        frames=("com.shop.{service}.Cache.load (Cache.java:120)",),
        fatal=True,
    ),
    "key": ErrorKind(
        error_type="KeyError",
        template="'sku_{n}' not found in price table",
        frames=("{service}.pricing.lookup (pricing.py:19)", "{service}.views.post (views.py:102)"),
    ),
    "type": ErrorKind(
        error_type="TypeError",
        template="Cannot read properties of undefined (reading 'email')",
        frames=("{service}/src/render.js:48:17", "{service}/src/routes.js:12:5"),
    ),
}  # fmt: skip
