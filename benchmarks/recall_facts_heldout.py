"""A held-out set of planted facts for the recall probe, from a project unlike the development set's.

The project is "shopfront", an e-commerce platform: a Next.js storefront (apps/storefront), a Rust
inventory service (services/inventory), a Node order API (services/order-api), Terraform and
Kubernetes infrastructure (infra/), a Kafka event pipeline (pipeline/). Each fact is one tool
output of that project (a file read, a shell command, a grep) with one short verbatim answer in it,
among other values of the same kind, and three questions a developer might ask about it long after
the output left the context: a direct one that may name the file or command, a paraphrase in the
developer's own words, and a short vague one. None of the questions holds its answer.

`distractors(seed, count)` makes look-alike outputs of the same project (other files, other
environments, passing runs) that hold no answer and none of the facts' paths or commands; the same
seed gives the same scenes.

Pure data and the standard library: nothing here imports the agent, its tests or other benchmarks.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Scene:
    tool: str  # "read_file", "bash" or "grep"
    args: dict[str, object]  # {"path": ...} | {"command": ...} | {"pattern": ..., "path": ...}
    output: str  # the tool's whole output, as the agent's tools print it
    is_error: bool = False  # True when a bash exit code is not 0


@dataclass(frozen=True, slots=True)
class PlantedFact:
    scene: Scene
    answer: str  # short verbatim substring of scene.output, in exactly one scene, not on its first/last line
    questions: tuple[str, ...]  # exactly 3: (direct, paraphrase, vague)


def numbered(text: str) -> str:
    lines = text.rstrip("\n").split("\n")
    return "\n".join(f"{n:6d}\t{line}" for n, line in enumerate(lines, 1))


def read_scene(path: str, text: str) -> Scene:
    return Scene("read_file", {"path": path}, numbered(text))


def bash_scene(command: str, text: str, code: int = 0) -> Scene:
    return Scene("bash", {"command": command}, f"{text.rstrip()}\n[exit code {code}]", code != 0)


def grep_scene(pattern: str, path: str, text: str) -> Scene:
    return Scene("grep", {"pattern": pattern, "path": path}, text.rstrip("\n"))


_FACTS: list[PlantedFact] = []


def _plant(scene: Scene, answer: str, direct: str, paraphrase: str, vague: str) -> None:
    _FACTS.append(PlantedFact(scene, answer, (direct, paraphrase, vague)))


# --- configuration -------------------------------------------------------------------------------

_plant(
    read_scene(
        "services/order-api/config/default.json",
        """\
{
  "server": {
    "port": 4000,
    "host": "0.0.0.0",
    "trustProxy": true,
    "requestTimeoutMs": 30000,
    "bodyLimit": "256kb"
  },
  "database": {
    "poolMin": 2,
    "poolMax": 20,
    "statementTimeoutMs": 8000,
    "idleTimeoutMs": 10000
  },
  "redis": {
    "keyPrefix": "orders:",
    "connectTimeoutMs": 2000
  },
  "payments": {
    "provider": "stripe",
    "captureMethod": "manual",
    "authorizationTimeoutMs": 12000,
    "webhookToleranceSeconds": 300,
    "maxRetries": 2
  },
  "inventory": {
    "baseUrl": "http://inventory.shopfront.svc.cluster.local:8080",
    "reserveTimeoutMs": 1500,
    "holdSeconds": 900
  },
  "tax": {
    "timeoutMs": 800,
    "fallbackRate": 0.2
  },
  "kafka": {
    "clientId": "order-api",
    "brokers": ["kafka-0.kafka:9092", "kafka-1.kafka:9092", "kafka-2.kafka:9092"],
    "topics": {
      "orderPlaced": "orders.placed.v1",
      "orderCancelled": "orders.cancelled.v1",
      "refundIssued": "payments.refunds.v1"
    }
  },
  "rateLimit": {
    "windowMs": 60000,
    "max": 120
  },
  "logging": {
    "level": "info",
    "redact": ["req.headers.authorization", "payment.card"]
  }
}
""",
    ),
    "12000",
    "In services/order-api/config/default.json, what is the payment authorization timeout?",
    "How long does the Node order service wait for the card processor to approve a charge before giving up?",
    "how patient are we with card approvals?",
)

_plant(
    read_scene(
        "infra/k8s/inventory/deployment.yaml",
        """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: inventory
  namespace: shopfront
  labels:
    app.kubernetes.io/name: inventory
    app.kubernetes.io/part-of: shopfront
spec:
  replicas: 3
  revisionHistoryLimit: 5
  strategy:
    type: RollingUpdate
    rollingUpdate:
      maxSurge: 1
      maxUnavailable: 0
  selector:
    matchLabels:
      app.kubernetes.io/name: inventory
  template:
    metadata:
      labels:
        app.kubernetes.io/name: inventory
      annotations:
        prometheus.io/scrape: "true"
        prometheus.io/port: "9464"
    spec:
      serviceAccountName: inventory
      terminationGracePeriodSeconds: 45
      containers:
        - name: inventory
          image: 318245790112.dkr.ecr.eu-west-1.amazonaws.com/shopfront/inventory:1.8.2
          ports:
            - name: http
              containerPort: 8080
            - name: metrics
              containerPort: 9464
          env:
            - name: RUST_LOG
              value: inventory=info,sqlx=warn
            - name: INVENTORY_CONFIG
              value: /etc/inventory/production.toml
          resources:
            requests:
              cpu: 250m
              memory: 384Mi
            limits:
              cpu: "1"
              memory: 768Mi
          readinessProbe:
            httpGet:
              path: /readyz
              port: http
            periodSeconds: 5
          livenessProbe:
            httpGet:
              path: /healthz
              port: http
            initialDelaySeconds: 10
            periodSeconds: 15
          volumeMounts:
            - name: config
              mountPath: /etc/inventory
              readOnly: true
      volumes:
        - name: config
          configMap:
            name: inventory-config
""",
    ),
    "768Mi",
    "What memory limit does infra/k8s/inventory/deployment.yaml set on the container?",
    "How much RAM can each stock-service pod use before Kubernetes kills it?",
    "inventory pods' RAM ceiling?",
)

_plant(
    read_scene(
        "services/inventory/config/production.toml",
        """\
# Inventory service: production settings.
# Every value can be overridden by an INVENTORY__SECTION__KEY environment variable.

[server]
bind = "0.0.0.0:8080"
metrics_bind = "0.0.0.0:9464"
shutdown_grace_secs = 30

[database]
url_env = "INVENTORY_DATABASE_URL"
max_connections = 32
min_connections = 4
acquire_timeout_ms = 3000
statement_cache_capacity = 200

[reservations]
default_hold_secs = 900
max_hold_secs = 3600
sweep_interval_secs = 20
max_qty_per_line = 25
oversell_buffer = 0

[kafka]
brokers = "kafka-0.kafka:9092,kafka-1.kafka:9092,kafka-2.kafka:9092"
group_id = "inventory-reservations"
topics = ["orders.placed.v1", "orders.cancelled.v1"]
auto_offset_reset = "earliest"
session_timeout_ms = 45000
max_poll_interval_ms = 300000

[producer]
topic = "inventory.changed.v1"
acks = "all"
linger_ms = 5
compression = "zstd"

[warehouses]
default = "DUB1"
fallback_order = ["DUB1", "AMS2", "FRA1"]
""",
    ),
    "sweep_interval_secs = 20",
    "In the inventory service's production.toml, how often does the reservation sweep run?",
    "How frequently does the Rust stock service go looking for holds that have timed out and free them?",
    "how often are stale holds cleaned up?",
)

_plant(
    read_scene(
        "services/order-api/.env.example",
        """\
# Copy to .env and fill in. Never commit real secrets.
NODE_ENV=development
PORT=4000
LOG_LEVEL=debug

# Postgres (docker compose)
DATABASE_URL=postgresql://shop:shop@localhost:5433/orders?schema=public
DATABASE_POOL_MAX=10

# Redis
REDIS_URL=redis://localhost:6380/0
IDEMPOTENCY_KEY_TTL=36h
CART_LOCK_TTL=15s

# Kafka
KAFKA_BROKERS=localhost:29092
KAFKA_CLIENT_ID=order-api-local
KAFKA_SASL_MECHANISM=
KAFKA_SSL=false

# Payments (test mode keys from the team vault)
STRIPE_SECRET_KEY=
STRIPE_WEBHOOK_SECRET=
PAYMENT_CAPTURE_DELAY=2h

# Downstream services
INVENTORY_BASE_URL=http://localhost:8081
TAX_SERVICE_URL=http://localhost:8090
TAX_SERVICE_TIMEOUT_MS=800

# Feature flags
FEATURE_SPLIT_SHIPMENTS=false
FEATURE_GIFT_CARDS=true
""",
    ),
    "36h",
    "What is IDEMPOTENCY_KEY_TTL set to in the order API's .env.example?",
    "How long does the Node service remember a retried request's key so it won't create the order twice?",
    "how long are duplicate-request keys kept?",
)

_plant(
    read_scene(
        "infra/terraform/envs/prod/terraform.tfvars",
        """\
environment = "prod"
aws_region  = "eu-west-1"
project     = "shopfront"

vpc_cidr             = "10.40.0.0/16"
private_subnet_cidrs = ["10.40.0.0/19", "10.40.32.0/19", "10.40.64.0/19"]
public_subnet_cidrs  = ["10.40.96.0/22", "10.40.100.0/22", "10.40.104.0/22"]

# EKS
eks_cluster_version     = "1.29"
eks_node_instance_types = ["m6i.2xlarge"]
eks_node_min_size       = 3
eks_node_max_size       = 12
eks_node_desired_size   = 4

# RDS (orders and inventory share one instance, separate databases)
rds_engine_version    = "16.3"
rds_instance_class    = "db.r6g.xlarge"
rds_allocated_storage = 400
rds_multi_az          = true
rds_backup_retention  = 14

# ElastiCache
redis_node_type          = "cache.r7g.large"
redis_num_cache_clusters = 2

# MSK
msk_kafka_version        = "3.6.0"
msk_broker_instance_type = "kafka.m7g.large"
msk_broker_count         = 3
msk_ebs_volume_size      = 1000

# CDN
cloudfront_price_class = "PriceClass_100"
storefront_domain      = "www.shopfront.dev"
api_domain             = "api.shopfront.dev"

tags = {
  Owner      = "platform-team"
  CostCenter = "ecom-42"
}
""",
    ),
    "db.r6g.xlarge",
    "What rds_instance_class is set in the prod terraform.tfvars?",
    "What size of machine does the production Postgres database run on?",
    "how big is the prod database box?",
)

_plant(
    read_scene(
        "infra/terraform/modules/msk/variables.tf",
        """\
variable "name" {
  description = "Cluster name prefix, e.g. shopfront-prod."
  type        = string
}

variable "kafka_version" {
  description = "Apache Kafka version for the MSK cluster."
  type        = string
  default     = "3.5.1"
}

variable "broker_instance_type" {
  description = "Instance type of every broker."
  type        = string
  default     = "kafka.m5.large"
}

variable "broker_count" {
  description = "Number of brokers; must be a multiple of the number of subnets."
  type        = number
  default     = 3
}

variable "ebs_volume_size" {
  description = "Storage per broker, in GiB."
  type        = number
  default     = 250
}

variable "subnet_ids" {
  description = "Private subnets, one per availability zone."
  type        = list(string)
}

variable "allowed_security_group_ids" {
  description = "Security groups allowed to reach the brokers on 9094 (TLS)."
  type        = list(string)
  default     = []
}

variable "log_retention_days" {
  description = "Retention of the broker logs in CloudWatch."
  type        = number
  default     = 30
}

variable "auto_create_topics" {
  description = "Let clients create topics; off everywhere but dev."
  type        = bool
  default     = false
}
""",
    ),
    "kafka.m5.large",
    "In the msk module's variables.tf, what is the default broker instance type?",
    "If an environment doesn't override it, what machine size do the managed Kafka brokers get?",
    "default broker size in the terraform module?",
)

_plant(
    read_scene(
        "pipeline/topics.yaml",
        """\
# Topics of the event pipeline. Applied by `make topics` (kafka-topics.sh --alter is idempotent).
defaults:
  replication.factor: 3
  min.insync.replicas: 2
  compression.type: zstd

topics:
  - name: orders.placed.v1
    partitions: 12
    config:
      retention.ms: 1209600000
      cleanup.policy: delete

  - name: orders.cancelled.v1
    partitions: 6
    config:
      retention.ms: 604800000
      cleanup.policy: delete

  - name: payments.refunds.v1
    partitions: 6
    config:
      retention.ms: 2592000000
      cleanup.policy: delete

  - name: inventory.changed.v1
    partitions: 12
    config:
      retention.ms: 259200000
      cleanup.policy: delete

  - name: inventory.levels.v1
    partitions: 12
    config:
      cleanup.policy: compact
      min.cleanable.dirty.ratio: 0.2

  - name: customers.segments.v1
    partitions: 3
    config:
      cleanup.policy: compact

  - name: orders.enriched.v1
    partitions: 12
    config:
      retention.ms: 432000000
      cleanup.policy: delete

  - name: dlq.order-enricher
    partitions: 1
    config:
      retention.ms: 1814400000
""",
    ),
    "1209600000",
    "In pipeline/topics.yaml, what retention is configured on the order-placed topic?",
    "How long does the message broker keep the events for newly placed orders before deleting them?",
    "how long do placed-order events stick around?",
)

_plant(
    read_scene(
        "docker-compose.yml",
        """\
name: shopfront

services:
  postgres:
    image: postgres:16.3-alpine
    environment:
      POSTGRES_USER: shop
      POSTGRES_PASSWORD: shop
      POSTGRES_MULTIPLE_DATABASES: orders,inventory
    ports:
      - "5433:5432"
    volumes:
      - pgdata:/var/lib/postgresql/data
      - ./infra/local/pg-init:/docker-entrypoint-initdb.d:ro
    healthcheck:
      test: ["CMD-SHELL", "pg_isready -U shop"]
      interval: 5s
      retries: 10

  redis:
    image: redis:7.2.5-alpine
    ports:
      - "6380:6379"
    command: ["redis-server", "--appendonly", "no"]

  kafka:
    image: bitnami/kafka:3.7.0
    ports:
      - "29092:29092"
    environment:
      KAFKA_CFG_NODE_ID: "0"
      KAFKA_CFG_PROCESS_ROLES: controller,broker
      KAFKA_CFG_LISTENERS: PLAINTEXT://:9092,CONTROLLER://:9093,EXTERNAL://:29092
      KAFKA_CFG_ADVERTISED_LISTENERS: PLAINTEXT://kafka:9092,EXTERNAL://localhost:29092
      KAFKA_CFG_LISTENER_SECURITY_PROTOCOL_MAP: CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,EXTERNAL:PLAINTEXT
      KAFKA_CFG_CONTROLLER_QUORUM_VOTERS: 0@kafka:9093
      KAFKA_CFG_CONTROLLER_LISTENER_NAMES: CONTROLLER
      KAFKA_CFG_AUTO_CREATE_TOPICS_ENABLE: "true"

  kafka-ui:
    image: provectuslabs/kafka-ui:v0.7.2
    ports:
      - "8089:8080"
    environment:
      KAFKA_CLUSTERS_0_NAME: local
      KAFKA_CLUSTERS_0_BOOTSTRAPSERVERS: kafka:9092
    depends_on: [kafka]

  mailpit:
    image: axllent/mailpit:v1.18
    ports:
      - "8025:8025"
      - "1025:1025"

volumes:
  pgdata:
""",
    ),
    "postgres:16.3-alpine",
    "Which Postgres image does docker-compose.yml pull?",
    "What image and tag is the local relational database container started from?",
    "local db container version?",
)

_plant(
    read_scene(
        "infra/nginx/storefront.conf",
        """\
upstream storefront_next {
    server storefront.shopfront.svc.cluster.local:3000;
    keepalive 32;
}

upstream order_api {
    server order-api.shopfront.svc.cluster.local:4000;
    keepalive 16;
}

limit_req_zone $binary_remote_addr zone=checkout:10m rate=5r/s;

server {
    listen 8080;
    server_name www.shopfront.dev;

    client_max_body_size 2m;
    gzip on;
    gzip_types text/css application/javascript application/json image/svg+xml;

    location /_next/static/ {
        proxy_pass http://storefront_next;
        expires 365d;
        add_header Cache-Control "public, max-age=31536000, immutable";
    }

    location /api/checkout/ {
        limit_req zone=checkout burst=10 nodelay;
        proxy_pass http://order_api/v1/checkout/;
        proxy_connect_timeout 3s;
        proxy_read_timeout 30s;
    }

    location /api/ {
        proxy_pass http://order_api/v1/;
        proxy_http_version 1.1;
        proxy_set_header Connection "";
        proxy_set_header X-Request-Id $request_id;
        proxy_connect_timeout 5s;
        proxy_read_timeout 75s;
        proxy_send_timeout 30s;
    }

    location / {
        proxy_pass http://storefront_next;
        proxy_http_version 1.1;
        proxy_set_header Connection "";
        proxy_set_header Host $host;
        proxy_read_timeout 20s;
    }

    location = /healthz {
        access_log off;
        return 200 "ok";
    }
}
""",
    ),
    "proxy_read_timeout 75s",
    "In infra/nginx/storefront.conf, what's the read timeout on the general /api/ location?",
    "How long will the reverse proxy wait for the order backend to answer ordinary API calls (not checkout)?",
    "proxy wait time for api calls?",
)

_plant(
    read_scene(
        ".github/workflows/ci.yml",
        """\
name: CI

on:
  push:
    branches: [main]
  pull_request:

concurrency:
  group: ci-${{ github.ref }}
  cancel-in-progress: true

jobs:
  changes:
    runs-on: ubuntu-latest
    timeout-minutes: 5
    outputs:
      node: ${{ steps.filter.outputs.node }}
      rust: ${{ steps.filter.outputs.rust }}
    steps:
      - uses: actions/checkout@v4
      - uses: dorny/paths-filter@v3
        id: filter
        with:
          filters: |
            node: ['apps/**', 'services/order-api/**', 'packages/**', 'pnpm-lock.yaml']
            rust: ['services/inventory/**']

  node:
    needs: changes
    if: needs.changes.outputs.node == 'true'
    runs-on: ubuntu-latest
    timeout-minutes: 15
    strategy:
      matrix:
        task: [lint, typecheck, "test (order-api)", "test (storefront)"]
    steps:
      - uses: actions/checkout@v4
      - uses: pnpm/action-setup@v4
      - uses: actions/setup-node@v4
        with:
          node-version-file: .nvmrc
          cache: pnpm
      - run: pnpm install --frozen-lockfile
      - run: pnpm ci:${{ matrix.task }}

  rust:
    needs: changes
    if: needs.changes.outputs.rust == 'true'
    runs-on: ubuntu-latest
    timeout-minutes: 20
    defaults:
      run:
        working-directory: services/inventory
    services:
      postgres:
        image: postgres:16
        env:
          POSTGRES_PASSWORD: postgres
        ports: ["5432:5432"]
    steps:
      - uses: actions/checkout@v4
      - uses: dtolnay/rust-toolchain@stable
        with:
          components: clippy, rustfmt
      - uses: Swatinem/rust-cache@v2
        with:
          workspaces: services/inventory
      - run: cargo fmt --check
      - run: cargo clippy --all-targets --locked -- -D warnings
      - run: cargo test --locked
        env:
          DATABASE_URL: postgres://postgres:postgres@localhost:5432/postgres

  e2e:
    needs: [node]
    runs-on: ubuntu-latest
    timeout-minutes: 35
    strategy:
      fail-fast: false
      matrix:
        shard: [1/4, 2/4, 3/4, 4/4]
    steps:
      - uses: actions/checkout@v4
      - uses: pnpm/action-setup@v4
      - uses: actions/setup-node@v4
        with:
          node-version-file: .nvmrc
          cache: pnpm
      - run: pnpm install --frozen-lockfile
      - run: pnpm --filter storefront exec playwright install --with-deps chromium
      - run: pnpm --filter storefront exec playwright test --shard=${{ matrix.shard }}
      - uses: actions/upload-artifact@v4
        if: failure()
        with:
          name: playwright-report-${{ strategy.job-index }}
          path: apps/storefront/playwright-report
          retention-days: 7
""",
    ),
    "timeout-minutes: 35",
    "In .github/workflows/ci.yml, what's the time limit on the e2e job?",
    "How long can the browser-test job in the pipeline run before GitHub cancels it?",
    "how long may the e2e job run?",
)

_plant(
    read_scene(
        "services/inventory/Dockerfile",
        """\
# syntax=docker/dockerfile:1.7

FROM rust:1.79-slim-bookworm AS chef
RUN cargo install cargo-chef --locked --version 0.1.67
WORKDIR /src

FROM chef AS planner
COPY . .
RUN cargo chef prepare --recipe-path recipe.json

FROM chef AS build
RUN apt-get update && apt-get install -y --no-install-recommends pkg-config libssl-dev cmake \\
    && rm -rf /var/lib/apt/lists/*
COPY --from=planner /src/recipe.json recipe.json
RUN cargo chef cook --release --recipe-path recipe.json
COPY . .
ENV SQLX_OFFLINE=true
RUN cargo build --release --locked --bin inventory

FROM gcr.io/distroless/cc-debian12:nonroot AS runtime
COPY --from=build /src/target/release/inventory /usr/local/bin/inventory
COPY config/production.toml /etc/inventory/production.toml
USER nonroot:nonroot
EXPOSE 8080 9464
ENV RUST_LOG=inventory=info
ENTRYPOINT ["/usr/local/bin/inventory"]
""",
    ),
    "gcr.io/distroless/cc-debian12:nonroot",
    "What base image does the final stage of services/inventory/Dockerfile use?",
    "What minimal image does the Rust service's container actually run on in the end?",
    "inventory runtime base image?",
)

# --- dependencies --------------------------------------------------------------------------------

_plant(
    read_scene(
        "apps/storefront/package.json",
        """\
{
  "name": "storefront",
  "version": "0.1.0",
  "private": true,
  "scripts": {
    "dev": "next dev -p 3000",
    "build": "next build",
    "start": "next start",
    "lint": "next lint",
    "typecheck": "tsc --noEmit",
    "test": "vitest",
    "e2e": "playwright test"
  },
  "dependencies": {
    "@shopfront/ui": "workspace:*",
    "@tanstack/react-query": "5.51.1",
    "clsx": "2.1.1",
    "next": "14.2.5",
    "next-auth": "4.24.7",
    "react": "18.3.1",
    "react-dom": "18.3.1",
    "zod": "3.23.8",
    "zustand": "4.5.4"
  },
  "devDependencies": {
    "@playwright/test": "1.45.1",
    "@testing-library/react": "16.0.0",
    "@types/node": "20.14.10",
    "@types/react": "18.3.3",
    "@vitejs/plugin-react": "4.3.1",
    "eslint": "8.57.0",
    "eslint-config-next": "14.2.5",
    "jsdom": "24.1.0",
    "msw": "2.3.1",
    "tailwindcss": "3.4.4",
    "typescript": "5.5.3",
    "vitest": "1.6.0"
  }
}
""",
    ),
    "4.5.4",
    "Which zustand version does apps/storefront/package.json pin?",
    "What version of the small client-side state store library is the front-end on?",
    "front-end state library version?",
)

_plant(
    bash_scene(
        "grep -A2 -E '^name = \"(axum|chrono|hyper|rdkafka|serde|sqlx|tokio|tracing|uuid)\"$' "
        "services/inventory/Cargo.lock",
        """\
name = "axum"
version = "0.7.5"
source = "registry+https://github.com/rust-lang/crates.io-index"
--
name = "chrono"
version = "0.4.38"
source = "registry+https://github.com/rust-lang/crates.io-index"
--
name = "hyper"
version = "1.4.0"
source = "registry+https://github.com/rust-lang/crates.io-index"
--
name = "rdkafka"
version = "0.36.2"
source = "registry+https://github.com/rust-lang/crates.io-index"
--
name = "serde"
version = "1.0.204"
source = "registry+https://github.com/rust-lang/crates.io-index"
--
name = "sqlx"
version = "0.7.4"
source = "registry+https://github.com/rust-lang/crates.io-index"
--
name = "tokio"
version = "1.38.1"
source = "registry+https://github.com/rust-lang/crates.io-index"
--
name = "tracing"
version = "0.1.40"
source = "registry+https://github.com/rust-lang/crates.io-index"
--
name = "uuid"
version = "1.10.0"
source = "registry+https://github.com/rust-lang/crates.io-index"
""",
    ),
    "1.38.1",
    "What tokio version is locked in the inventory service's Cargo.lock?",
    "Which release of the async runtime does the Rust stock service actually build against?",
    "locked async runtime version?",
)

_plant(
    bash_scene(
        "cd services/order-api && npm ls --depth=0",
        """\
order-api@2.14.0 /home/dev/shopfront/services/order-api
├── @fastify/cors@9.0.1
├── @fastify/helmet@11.1.1
├── @fastify/rate-limit@9.1.0
├── @opentelemetry/sdk-node@0.52.1
├── @prisma/client@5.16.1
├── @types/jest@29.5.12
├── @types/node@20.14.10
├── dotenv@16.4.5
├── fastify@4.28.1
├── ioredis@5.4.1
├── jest@29.7.0
├── kafkajs@2.2.4
├── pino@9.2.0
├── pino-pretty@11.2.1
├── prisma@5.16.1
├── stripe@16.2.0
├── supertest@7.0.0
├── ts-jest@29.2.2
├── tsx@4.16.2
├── typescript@5.5.3
├── undici@6.19.2
└── zod@3.23.8
""",
    ),
    "kafkajs@2.2.4",
    "In npm ls for the order API, which kafkajs version is installed?",
    "What version of the message broker client library does the Node order service have?",
    "order service's event-bus client version?",
)

# --- tests ---------------------------------------------------------------------------------------

_plant(
    bash_scene(
        "pnpm --filter storefront test -- --run",
        """\

> storefront@0.1.0 test /home/dev/shopfront/apps/storefront
> vitest --run

 RUN  v1.6.0 /home/dev/shopfront/apps/storefront

 ✓ lib/__tests__/money.test.ts  (9 tests) 14ms
 ✓ lib/__tests__/slug.test.ts  (5 tests) 6ms
 ✓ components/__tests__/PriceTag.test.tsx  (6 tests) 88ms
 ✓ components/__tests__/ProductCard.test.tsx  (4 tests) 131ms
 ❯ lib/cart/__tests__/cartReducer.test.ts  (12 tests | 1 failed) 27ms
   ❯ lib/cart/__tests__/cartReducer.test.ts > cartReducer > rounds bundle discount per line, not per cart
     → expected 4197 to be 4198 // Object.is equality
 ✓ lib/cart/__tests__/selectors.test.ts  (8 tests) 11ms
 ✓ hooks/__tests__/useDebounce.test.ts  (3 tests) 204ms
 ✓ app/(shop)/search/__tests__/filters.test.ts  (7 tests) 19ms

⎯⎯⎯⎯⎯⎯⎯ Failed Tests 1 ⎯⎯⎯⎯⎯⎯⎯

 FAIL  lib/cart/__tests__/cartReducer.test.ts > cartReducer > rounds bundle discount per line, not per cart
AssertionError: expected 4197 to be 4198 // Object.is equality

- Expected
+ Received

- 4198
+ 4197

 ❯ lib/cart/__tests__/cartReducer.test.ts:143:41
    141|     const state = reduce(initial, [addBundle('SKU-TEE-BLK-M', 3), applyCode('BUNDLE3')])
    142|     const totals = selectTotals(state)
    143|     expect(totals.subtotalCents).toBe(4198)
       |                                  ^
    144|   })
    145|

⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯

 Test Files  1 failed | 7 passed (8)
      Tests  1 failed | 53 passed (54)
   Start at  10:42:17
   Duration  2.31s (transform 412ms, setup 0ms, collect 1.87s, tests 500ms, environment 1.12s)

 ELIFECYCLE  Test failed. See above for more details.
""",
        1,
    ),
    "rounds bundle discount per line, not per cart",
    "Which test failed in the storefront vitest run?",
    "The one broken unit test in the Next.js app: what is it called?",
    "which frontend unit test went red?",
)

_plant(
    bash_scene(
        "cd services/inventory && cargo test",
        """\
   Compiling inventory v0.9.0 (/home/dev/shopfront/services/inventory)
    Finished `test` profile [unoptimized + debuginfo] target(s) in 14.82s
     Running unittests src/lib.rs (target/debug/deps/inventory-3f9a1c2e7b6d5e40)

running 24 tests
test api::tests::availability_returns_every_warehouse ... ok
test api::tests::reserve_rejects_zero_quantity ... ok
test api::tests::reserve_rejects_unknown_sku ... ok
test config::tests::env_overrides_toml ... ok
test kafka::consumer::tests::cancelled_order_releases_holds ... ok
test kafka::consumer::tests::duplicate_message_is_ignored ... ok
test kafka::producer::tests::level_change_is_keyed_by_sku ... ok
test reservation::tests::reserve_takes_from_first_warehouse_with_stock ... ok
test reservation::tests::reserve_falls_back_to_next_warehouse ... ok
test reservation::tests::release_is_idempotent ... ok
test reservation::tests::commit_turns_hold_into_allocation ... ok
test reservation::tests::extend_respects_max_hold ... ok
test reservation::sweeper::tests::sweep_skips_committed_holds ... ok
test reservation::sweeper::tests::expired_hold_returns_stock ... FAILED
test reservation::sweeper::tests::sweep_is_batched ... ok
test stock::ledger::tests::on_hand_never_negative ... ok
test stock::ledger::tests::adjustments_are_audited ... ok
test stock::level::tests::available_is_on_hand_minus_reserved ... ok
test stock::level::tests::serde_roundtrip ... ok
test warehouse::tests::fallback_order_from_config ... ok
test warehouse::tests::unknown_code_is_rejected ... ok
test warehouse::tests::closed_warehouse_is_skipped ... ok
test sku::tests::parses_sku_with_size ... ok
test sku::tests::rejects_lowercase ... ok

failures:

---- reservation::sweeper::tests::expired_hold_returns_stock stdout ----
thread 'reservation::sweeper::tests::expired_hold_returns_stock' panicked at src/reservation/sweeper.rs:188:9:
assertion `left == right` failed: stock should be back after the sweep
  left: 7
 right: 10
note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace


failures:
    reservation::sweeper::tests::expired_hold_returns_stock

test result: FAILED. 23 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.42s

error: test failed, to rerun pass `--lib`
""",
        101,
    ),
    "expired_hold_returns_stock",
    "Which test failed when I ran cargo test in the inventory service?",
    "What's the name of the broken case in the Rust stock service's test suite?",
    "which rust test was failing?",
)

_plant(
    bash_scene(
        "pnpm --filter storefront exec playwright test --project=chromium",
        """\

Running 18 tests using 4 workers

  ✓   1 [chromium] › home.spec.ts:5:3 › home › renders hero and featured collections (1.9s)
  ✓   2 [chromium] › home.spec.ts:19:3 › home › mega menu opens on hover (1.2s)
  ✓   3 [chromium] › pdp.spec.ts:8:3 › product page › size picker updates price (2.4s)
  ✓   4 [chromium] › pdp.spec.ts:27:3 › product page › out of stock size is disabled (1.6s)
  ✓   5 [chromium] › cart.spec.ts:6:3 › cart › add to cart opens the drawer (2.1s)
  ✓   6 [chromium] › cart.spec.ts:22:3 › cart › quantity stepper stops at the line maximum (1.8s)
  ✓   7 [chromium] › cart.spec.ts:41:3 › cart › coupon code applies discount (2.6s)
  ✓   8 [chromium] › checkout.spec.ts:12:3 › checkout › shipping estimate for a postcode (3.1s)
  ✘   9 [chromium] › checkout.spec.ts:61:3 › checkout › guest can pay with saved address (30.0s)
  ✓  10 [chromium] › checkout.spec.ts:98:3 › checkout › free shipping banner above threshold (2.2s)
  ✓  11 [chromium] › search.spec.ts:9:3 › search › results page paginates (2.9s)
  ✘  12 [chromium] › search.spec.ts:22:3 › search › typeahead shows suggestions (6.1s)
  ✓  13 [chromium] › search.spec.ts:22:3 › search › typeahead shows suggestions (retry #1) (1.4s)
  ✓  14 [chromium] › account.spec.ts:7:3 › account › order history lists past orders (2.7s)
  ✓  15 [chromium] › account.spec.ts:30:3 › account › address book edit (1.9s)
  ✓  16 [chromium] › gift-cards.spec.ts:5:3 › gift cards › balance check (1.3s)
  ✓  17 [chromium] › i18n.spec.ts:4:3 › i18n › currency switcher keeps the cart (2.0s)
  ✓  18 [chromium] › i18n.spec.ts:21:3 › i18n › locale prefix in links (1.1s)

  1) [chromium] › checkout.spec.ts:61:3 › checkout › guest can pay with saved address ──────────────

    Test timeout of 30000ms exceeded.

    Error: locator.click: Test timeout of 30000ms exceeded.
    Call log:
      - waiting for getByRole('button', { name: 'Place order' })
      -   locator resolved to <button disabled type="submit" data-testid="place-order">Place order</button>
      - attempting click action
      -   waiting for element to be visible, enabled and stable
      -     element is not enabled
      - retrying click action, attempt #1

      74 |     await page.getByLabel('Card number').fill(testCard.number);
      75 |     await page.getByLabel('Expiry').fill(testCard.expiry);
    > 76 |     await page.getByRole('button', { name: 'Place order' }).click();
         |                                                              ^
      77 |     await expect(page).toHaveURL(/order.confirmed/);
      78 |   });

    attachment #1: screenshot (image/png) ──────────────────────────────────────────────────────────
    test-results/checkout-checkout-guest-can-pay-with-saved-address-chromium/test-failed-1.png
    ────────────────────────────────────────────────────────────────────────────────────────────────

  1 failed
    [chromium] › checkout.spec.ts:61:3 › checkout › guest can pay with saved address
  1 flaky
    [chromium] › search.spec.ts:22:3 › search › typeahead shows suggestions
  16 passed (1.4m)
""",
        1,
    ),
    "element is not enabled",
    "In the playwright run, why couldn't the checkout test click the button?",
    "When the browser test for guest checkout timed out, what was wrong with the submit button?",
    "why did the checkout e2e hang?",
)

_plant(
    bash_scene(
        "pnpm --filter order-api test -- refunds",
        """\

> order-api@2.14.0 test /home/dev/shopfront/services/order-api
> jest "refunds"

 FAIL  src/routes/__tests__/refunds.test.ts
  POST /v1/orders/:id/refunds
    ✓ issues a full refund (48 ms)
    ✓ issues a partial refund (31 ms)
    ✕ rejects a refund above the captured amount (27 ms)
    ✓ is idempotent for the same Idempotency-Key (40 ms)
    ✓ requires a reason code (12 ms)
    ✓ returns 404 for an unknown order (9 ms)

  ● POST /v1/orders/:id/refunds › rejects a refund above the captured amount

    expect(received).toBe(expected) // Object.is equality

    Expected: 422
    Received: 500

      86 |       .post(`/v1/orders/${order.id}/refunds`)
      87 |       .send({ amountCents: 99_999, reason: 'customer_request' });
      88 |
    > 89 |     expect(res.statusCode).toBe(422);
         |                            ^
      90 |     expect(res.body.error).toBe('refund_exceeds_capture');
      91 |   });
      92 |

      at Object.<anonymous> (src/routes/__tests__/refunds.test.ts:89:28)

Test Suites: 1 failed, 1 total
Tests:       1 failed, 5 passed, 6 total
Snapshots:   0 total
Time:        3.412 s
Ran all test suites matching /refunds/i.
 ELIFECYCLE  Test failed. See above for more details.
""",
        1,
    ),
    "Received: 500",
    "In the jest run for refunds, what status did the failing test actually get back?",
    "When the Node tests tried refunding more than was charged, what HTTP status came back instead?",
    "what did the over-refund test really get?",
)

# --- compilers and linters -----------------------------------------------------------------------

_plant(
    bash_scene(
        "cargo build -p inventory",
        """\
   Compiling inventory v0.9.0 (/home/dev/shopfront/services/inventory)
warning: unused import: `tracing::debug`
 --> src/api/availability.rs:4:5
  |
4 | use tracing::debug;
  |     ^^^^^^^^^^^^^^
  |
  = note: `#[warn(unused_imports)]` on by default

error[E0502]: cannot borrow `self.levels` as mutable because it is also borrowed as immutable
   --> src/stock/ledger.rs:142:13
    |
139 |         let current = self.levels.get(sku).unwrap_or(&Level::EMPTY);
    |                       ----------- immutable borrow occurs here
...
142 |             self.levels.insert(sku.clone(), current.minus(qty));
    |             ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ mutable borrow occurs here
143 |         }
144 |         Ok(current.on_hand)
    |            --------------- immutable borrow later used here

error[E0308]: mismatched types
  --> src/api/reserve.rs:58:39
   |
58 |         hold_for: Duration::from_secs(body.hold_secs),
   |                   ------------------- ^^^^^^^^^^^^^^ expected `u64`, found `u32`
   |                   |
   |                   arguments to this function are incorrect
   |
note: associated function defined here
  --> /rustc/129f3b9964af4d4a709d1383930ade12dfe7c081/library/core/src/time.rs:227:18
help: you can convert a `u32` to a `u64`
   |
58 |         hold_for: Duration::from_secs(body.hold_secs.into()),
   |                                                     +++++++

Some errors have detailed explanations: E0308, E0502.
For more information about an error, try `rustc --explain E0308`.
warning: `inventory` (lib) generated 1 warning
error: could not compile `inventory` (lib) due to 2 previous errors; 1 warning emitted
""",
        101,
    ),
    "src/stock/ledger.rs:142:13",
    "Where did cargo build report the borrow-checker error?",
    "The compile error in the Rust service about borrowing something mutably while it's still read: "
    "which file, line and column?",
    "where's the borrow error?",
)

_plant(
    bash_scene(
        "pnpm --filter order-api exec tsc --noEmit",
        """\
src/routes/refunds.ts:57:22 - error TS2345: Argument of type 'string | undefined' is not assignable to \
parameter of type 'string'.
  Type 'undefined' is not assignable to type 'string'.

57     await issueRefund(order.paymentIntentId, amountCents, req.body.reason);
                        ~~~~~~~~~~~~~~~~~~~~~

src/services/pricing.ts:112:9 - error TS2322: Type 'number | null' is not assignable to type 'number'.
  Type 'null' is not assignable to type 'number'.

112         taxCents: taxQuote.amountCents,
            ~~~~~~~~

  src/types/order.ts:61:3
    61   taxCents: number;
         ~~~~~~~~
    The expected type comes from property 'taxCents' which is declared here on type 'OrderTotals'

src/kafka/publisher.ts:31:30 - error TS7006: Parameter 'err' implicitly has an 'any' type.

31   producer.on('producer.network.request_timeout', (err) => {
                                                    ~~~

src/routes/giftCards.ts:18:7 - error TS2339: Property 'balanceCents' does not exist on type 'GiftCard'.

18   if (card.balanceCents < amount) {
         ~~~~~~~~~~~~


Found 4 errors in 4 files.

Errors  Files
     1  src/kafka/publisher.ts:31
     1  src/routes/giftCards.ts:18
     1  src/routes/refunds.ts:57
     1  src/services/pricing.ts:112
""",
        2,
    ),
    "TS2322",
    "What TypeScript error code did tsc give for the pricing service file?",
    "The type checker said a tax amount might be null in the price calculation: which error number was that?",
    "error code for the nullable tax?",
)

_plant(
    bash_scene(
        "pnpm --filter storefront lint",
        """\

> storefront@0.1.0 lint /home/dev/shopfront/apps/storefront
> next lint


./app/(shop)/product/[slug]/page.tsx
38:9  Warning: Using `<img>` could result in slower LCP and higher bandwidth.  @next/next/no-img-element
71:13  Warning: Image elements must have an alt prop, either with meaningful text.  jsx-a11y/alt-text

./components/CartDrawer.tsx
41:6  Warning: React Hook useEffect has a missing dependency: 'refresh'.  react-hooks/exhaustive-deps

./components/MiniCart.tsx
27:5  Error: React Hook "useCart" is called conditionally.  react-hooks/rules-of-hooks
52:9  Warning: 'formatted' is assigned a value but never used.  @typescript-eslint/no-unused-vars

./components/SearchBox.tsx
18:10  Warning: 'debounceMs' is defined but never used.  @typescript-eslint/no-unused-vars
33:6  Warning: React Hook useCallback has a missing dependency: 'onSelect'.  react-hooks/exhaustive-deps

./lib/analytics.ts
12:1  Warning: Assign object to a variable before exporting as module default  \
import/no-anonymous-default-export

./app/(shop)/layout.tsx
9:1  Warning: Do not add stylesheets using next/head.  @next/next/no-css-tags

info  - Need to disable some ESLint rules? Learn more here: https://nextjs.org/docs/basic-features/eslint
 ELIFECYCLE  Command failed with exit code 1.
""",
        1,
    ),
    "react-hooks/rules-of-hooks",
    "Which eslint rule produced the only real error, not a warning, in the storefront lint?",
    "The front-end lint failure was about a hook being called inside a condition: what's the rule called?",
    "which lint rule actually failed?",
)

# --- crashes and logs ----------------------------------------------------------------------------

_plant(
    bash_scene(
        "kubectl logs -n shopfront deploy/order-api --previous --tail=30",
        """\
{"level":30,"time":"2024-07-09T14:21:58.114Z","msg":"connected to postgres","pool":"primary","max":20}
{"level":30,"time":"2024-07-09T14:21:58.201Z","msg":"kafka producer connected","clientId":"order-api"}
{"level":30,"time":"2024-07-09T14:21:58.377Z","msg":"server listening at http://0.0.0.0:4000"}
{"level":30,"time":"2024-07-09T14:22:03.019Z","reqId":"req-1f","msg":"incoming request","url":"/v1/cart"}
{"level":30,"time":"2024-07-09T14:22:03.088Z","reqId":"req-1f","msg":"request completed","statusCode":200}
{"level":30,"time":"2024-07-09T14:22:04.552Z","reqId":"req-20","msg":"incoming request","url":"/v1/orders"}
{"level":40,"time":"2024-07-09T14:22:04.601Z","reqId":"req-20","msg":"line has no price, sku SKU-GIFT-50"}
/app/dist/services/pricing.js:88
    const currency = line.price.currency;
                                ^

TypeError: Cannot read properties of undefined (reading 'currency')
    at computeLineTotals (/app/dist/services/pricing.js:88:33)
    at Array.map (<anonymous>)
    at computeTotals (/app/dist/services/pricing.js:61:28)
    at OrderService.place (/app/dist/services/orderService.js:142:31)
    at async Object.<anonymous> (/app/dist/routes/orders.js:37:23)

Node.js v20.15.1
npm notice
npm notice New minor version of npm available! 10.7.0 -> 10.8.2
npm notice To update run: npm install -g npm@10.8.2
npm notice
npm error path /app
npm error command failed
npm error signal SIGTERM
npm error command sh -c node dist/server.js
npm error A complete log of this run can be found in: /root/.npm/_logs/2024-07-09T14_22_04_310Z-debug-0.log
""",
    ),
    "computeLineTotals",
    "Which function threw the TypeError in the order API's previous container logs?",
    "The innermost frame of the Node crash about reading a property of undefined: what function was it?",
    "what function blew up in the order service?",
)

_plant(
    bash_scene(
        "kubectl logs -n shopfront-staging deploy/order-api --since=30m --timestamps",
        """\
2024-07-12T09:41:02.117Z {"level":"info","msg":"POST /v1/orders 201","durationMs":184,"reqId":"req_9a"}
2024-07-12T09:41:02.954Z {"level":"info","msg":"GET /v1/cart 200","durationMs":21,"reqId":"req_9b"}
2024-07-12T09:41:04.330Z {"level":"info","msg":"POST /v1/orders 201","durationMs":203,"reqId":"req_9c"}
2024-07-12T09:41:05.006Z {"level":"info","msg":"load test started","source":"k6","vus":200}
2024-07-12T09:41:11.472Z {"level":"info","msg":"POST /v1/orders 201","durationMs":611,"reqId":"req_a1"}
2024-07-12T09:41:13.805Z {"level":"warn","msg":"slow query","query":"orders.insert","durationMs":1240}
2024-07-12T09:41:16.203Z {"level":"info","msg":"POST /v1/orders 201","durationMs":1388,"reqId":"req_a7"}
2024-07-12T09:41:19.918Z {"level":"warn","msg":"slow query","query":"order_lines.insert","durationMs":2210}
2024-07-12T09:41:22.481Z {"level":"warn","msg":"pg pool exhausted","inUse":20,"max":20,"waiting":37}
2024-07-12T09:41:22.502Z {"level":"warn","msg":"pg pool exhausted","inUse":20,"max":20,"waiting":41}
2024-07-12T09:41:24.015Z {"level":"error","msg":"timeout acquiring a connection","waitedMs":5000}
2024-07-12T09:41:24.016Z {"level":"error","msg":"POST /v1/orders 503","durationMs":5012,"reqId":"req_b3"}
2024-07-12T09:41:24.391Z {"level":"error","msg":"timeout acquiring a connection","waitedMs":5000}
2024-07-12T09:41:25.770Z {"level":"warn","msg":"inventory reserve slow","durationMs":1490}
2024-07-12T09:41:27.048Z {"level":"error","msg":"POST /v1/orders 503","durationMs":5006,"reqId":"req_b9"}
2024-07-12T09:41:31.612Z {"level":"warn","msg":"pg pool exhausted","inUse":20,"max":20,"waiting":12}
2024-07-12T09:41:36.930Z {"level":"info","msg":"load test finished","source":"k6","vus":0}
2024-07-12T09:41:38.204Z {"level":"info","msg":"pg pool recovered","inUse":6,"max":20,"waiting":0}
2024-07-12T09:41:40.877Z {"level":"info","msg":"GET /v1/orders/ord_7Q 200","durationMs":33,"reqId":"req_c2"}
2024-07-12T09:41:44.105Z {"level":"info","msg":"POST /v1/orders 201","durationMs":176,"reqId":"req_c5"}
2024-07-12T09:41:51.660Z {"level":"info","msg":"GET /healthz 200","durationMs":1,"reqId":"req_c8"}
""",
    ),
    "2024-07-12T09:41:22.481Z",
    "In the staging order-api logs, when was the first pool-exhausted warning?",
    "At what time did the Node service on staging start running out of database connections?",
    "when did staging's pool first run dry?",
)

_plant(
    bash_scene(
        "kubectl logs -n shopfront deploy/inventory --previous --tail=30",
        """\
2024-07-11T03:14:50.004Z  INFO inventory: starting version=1.8.2 bind=0.0.0.0:8080
2024-07-11T03:14:50.118Z  INFO inventory::db: pool ready max_connections=32
2024-07-11T03:14:52.019Z  INFO inventory::kafka::consumer: joined group group=inventory-reservations
2024-07-11T03:14:52.020Z  INFO inventory::kafka::consumer: assigned partitions=[orders.placed.v1/0, \
orders.placed.v1/3, orders.cancelled.v1/1]
2024-07-11T03:15:01.773Z  INFO inventory::reservation: hold created sku=SKU-TEE-BLK-M qty=2 warehouse=DUB1
2024-07-11T03:15:04.201Z  INFO inventory::reservation::sweeper: released expired holds count=3
2024-07-11T03:15:11.530Z  WARN rdkafka::client: librdkafka: REQTMOUT [thrd:kafka-2.kafka:9092/2]: \
timed out waiting for response
2024-07-11T03:15:18.002Z  WARN inventory::kafka::consumer: commit failed error=RequestTimedOut; retrying
2024-07-11T03:15:20.118Z ERROR rdkafka::client: librdkafka: FAIL [thrd:kafka-1.kafka:9092/1]: Connect to \
ipv4#10.40.33.17:9092 failed: Connection refused
thread 'tokio-runtime-worker' panicked at src/kafka/consumer.rs:203:41:
called `Result::unwrap()` on an `Err` value: MessageConsumption(BrokerTransportFailure)
stack backtrace:
   0: rust_begin_unwind
             at /rustc/129f3b9964af4d4a709d1383930ade12dfe7c081/library/std/src/panicking.rs:652:5
   1: core::panicking::panic_fmt
             at /rustc/129f3b9964af4d4a709d1383930ade12dfe7c081/library/core/src/panicking.rs:72:14
   2: core::result::unwrap_failed
             at /rustc/129f3b9964af4d4a709d1383930ade12dfe7c081/library/core/src/result.rs:1654:5
   3: inventory::kafka::consumer::Consumer::run::{{closure}}
             at ./src/kafka/consumer.rs:203:41
   4: tokio::runtime::task::core::Core<T,S>::poll
   5: tokio::runtime::task::harness::Harness<T,S>::poll
note: Some details are omitted, run with `RUST_BACKTRACE=full` for a verbose backtrace.
2024-07-11T03:15:20.131Z ERROR inventory: consumer task ended; shutting down
2024-07-11T03:15:20.240Z  INFO inventory: http server drained in_flight=0
""",
    ),
    "BrokerTransportFailure",
    "What error value was the inventory service unwrapping when it panicked?",
    "When the Rust stock service crashed, what kind of Kafka failure was inside the Err it unwrapped?",
    "why did inventory panic?",
)

_plant(
    bash_scene(
        "kafka-consumer-groups.sh --bootstrap-server kafka-0.kafka:9092 --describe --group "
        "inventory-reservations | awk '{print $2,$3,$4,$5,$6}' | column -t",
        """\
TOPIC                PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG
orders.placed.v1     0          1184022         1184031         9
orders.placed.v1     1          1179455         1179455         0
orders.placed.v1     2          1190871         1190874         3
orders.placed.v1     3          1187302         1187302         0
orders.placed.v1     4          1176629         1176640         11
orders.placed.v1     5          1181988         1181990         2
orders.placed.v1     6          1183517         1183517         0
orders.placed.v1     7          1132760         1180973         48213
orders.placed.v1     8          1185044         1185049         5
orders.placed.v1     9          1178236         1178236         0
orders.placed.v1     10         1182401         1182407         6
orders.placed.v1     11         1180093         1180093         0
orders.cancelled.v1  0          86120           86120           0
orders.cancelled.v1  1          85877           85879           2
orders.cancelled.v1  2          86904           86904           0
orders.cancelled.v1  3          86233           86240           7
orders.cancelled.v1  4          85596           85596           0
orders.cancelled.v1  5          86018           86019           1
""",
    ),
    "48213",
    "In the consumer-group describe for inventory-reservations, what was the lag on the partition that was "
    "far behind?",
    "How many messages behind was the worst partition for the stock service's consumers?",
    "how far behind was the stuck partition?",
)

# --- git -----------------------------------------------------------------------------------------

_plant(
    bash_scene(
        "git log --oneline -20",
        """\
a93f1c7 (HEAD -> main, origin/main, origin/HEAD) storefront: recently viewed rail on PDP
5e2d8b0 order-api: refunds require a reason code
d17c4a9 infra: alarm on order-api 5xx rate
0b6e3f2 pipeline: kafkajs consumer retries with exponential backoff
c4a8e71 storefront: fix hydration mismatch in size picker
7c1e9ab inventory: bump rdkafka to 0.36, enable idempotent producer
e2f90d4 order-api: allocate line items to warehouses before payment
91d3b6c docs: local setup with docker compose
3fa7c02 inventory: warehouse fallback order from config
b85e1d7 storefront: next 14.2.5
4c0a9e3 infra: prod MSK to 3.6.0, bigger EBS volumes
f6b2d18 order-api: tax service client with one retry on ECONNRESET
28e7c5a pipeline: enrich order events with customer segment
a1d4f90 storefront: currency switcher keeps the cart
6e39b27 inventory: sweeper releases holds in batches of 500
cd82f14 order-api: prisma 5.16
5b7a0e8 ci: shard playwright across four runners
e94c3d1 storefront: mega menu
0f8b2a6 inventory: reservations API behind feature flag
73c5e9d order-api: idempotency keys in redis
""",
    ),
    "7c1e9ab",
    "In the recent git log, what's the hash of the commit that bumped the Rust Kafka crate?",
    "Which commit upgraded the stock service's library for talking to the message broker?",
    "hash of the inventory kafka client upgrade?",
)

_plant(
    bash_scene(
        "git branch -a",
        """\
  chore/renovate-config
  feat/SHOP-377-search-facets
* feat/SHOP-398-gift-cards
  feat/SHOP-401-wishlist-sync
  feat/SHOP-412-split-shipments
  fix/SHOP-405-asset-caching
  fix/SHOP-409-tax-rounding
  main
  spike/rust-pricing-engine
  remotes/origin/HEAD -> origin/main
  remotes/origin/chore/renovate-config
  remotes/origin/feat/SHOP-377-search-facets
  remotes/origin/feat/SHOP-398-gift-cards
  remotes/origin/feat/SHOP-401-wishlist-sync
  remotes/origin/feat/SHOP-412-split-shipments
  remotes/origin/feat/SHOP-415-klarna
  remotes/origin/fix/SHOP-405-asset-caching
  remotes/origin/fix/SHOP-409-tax-rounding
  remotes/origin/fix/SHOP-416-msk-alarms
  remotes/origin/main
  remotes/origin/release/2024-07
  remotes/origin/renovate/kafkajs-2.x
""",
    ),
    "feat/SHOP-412-split-shipments",
    "From git branch -a, what's the branch for sending one order out as several shipments?",
    "Where's the work for letting a single order go out in more than one box: exact branch name?",
    "the multi-parcel branch?",
)

_plant(
    bash_scene(
        "git tag -n1 --sort=-creatordate | head -n 22",
        """\
order-api-v2.14.0 order-api: partial refunds
storefront-v3.6.1 storefront: fix PDP hydration mismatch on size picker
inventory-v1.8.2 inventory: release expired holds when the sweeper restarts
infra-2024.07.08 infra: prod MSK to 3.6.0, bigger EBS
storefront-v3.6.0 storefront: recently viewed rail, new mega menu
order-api-v2.13.4 order-api: retry tax service once on ECONNRESET
pipeline-v0.7.0 pipeline: enrich order events with customer segment
storefront-v3.5.2 storefront: hotfix, currency switcher emptied the cart
inventory-v1.8.1 inventory: warehouse fallback order from config
order-api-v2.13.3 order-api: idempotency keys expire
infra-2024.06.24 infra: EKS 1.29
storefront-v3.5.1 storefront: PDP image zoom
pipeline-v0.6.2 pipeline: dead-letter topic for the enricher
inventory-v1.8.0 inventory: reservations API
order-api-v2.13.0 order-api: gift cards behind a flag
storefront-v3.5.0 storefront: checkout redesign
infra-2024.06.10 infra: nginx rate limit on checkout
inventory-v1.7.3 inventory: sqlx 0.7
order-api-v2.12.1 order-api: stripe API 2024-06-20
pipeline-v0.6.1 pipeline: kafkajs 2.2
storefront-v3.4.9 storefront: next 14.2
order-api-v2.12.0 order-api: prisma migrate in init container
""",
    ),
    "storefront-v3.5.2",
    "From git tag -n1, which tag is the storefront hotfix for the currency switcher?",
    "What did we tag the front-end release that stopped changing currency from wiping people's baskets?",
    "tag of the currency bug fix?",
)

_plant(
    bash_scene(
        "git log --format='%h %ad %an <%ae>%n    %s' --date=short -- "
        "services/order-api/src/routes/refunds.ts",
        """\
5e2d8b0 2024-07-05 Priya Raghunathan <priya.r@shopfront.dev>
    order-api: refunds require a reason code
9f3c2e1 2024-07-03 Amara Okafor <amara.okafor@shopfront.dev>
    refunds: partial refunds per line item
4b7a0d9 2024-07-02 Tomasz Wielgosz <tomasz@shopfront.dev>
    refunds: make POST idempotent per Idempotency-Key
c81e5f3 2024-06-27 Amara Okafor <amara.okafor@shopfront.dev>
    refunds: reject amounts above the captured total
2d6a9b4 2024-06-21 Jonas Lindqvist <jonas.l@shopfront.dev>
    refunds: publish payments.refunds.v1 after commit
e07b3f8 2024-06-19 Priya Raghunathan <priya.r@shopfront.dev>
    refunds: move stripe call out of the transaction
a54c1d2 2024-06-14 Mateo Herrera <mateo@shopfront.dev>
    refunds: zod schema for the request body
7be9f06 2024-06-11 Jonas Lindqvist <jonas.l@shopfront.dev>
    refunds: 404 for unknown orders
1c3e8a5 2024-06-07 Mateo Herrera <mateo@shopfront.dev>
    refunds: first version of POST /v1/orders/:id/refunds
f4a2b90 2024-06-05 Amara Okafor <amara.okafor@shopfront.dev>
    order-api: route skeletons
3d9e7c1 2024-06-03 Tomasz Wielgosz <tomasz@shopfront.dev>
    order-api: fastify app
""",
    ),
    "Tomasz Wielgosz",
    "In the git log of refunds.ts, who wrote the commit that made refund requests idempotent?",
    "Who made it so that sending the same refund request twice doesn't pay the customer back twice?",
    "who made refunds safe to retry?",
)

_plant(
    bash_scene(
        "git stash list && git status -sb",
        """\
stash@{0}: WIP on feat/SHOP-398-gift-cards: 3b2c1aa gift cards: balance endpoint
stash@{1}: On main: extra logging in the kafka consumer
stash@{2}: On fix/SHOP-405-asset-caching: nginx gzip + brotli for static assets
stash@{3}: WIP on main: a93f1c7 storefront: recently viewed rail on PDP
stash@{4}: On feat/SHOP-377-search-facets: half-done facet counts
stash@{5}: On main: local terraform backend override
stash@{6}: On feat/SHOP-401-wishlist-sync: wishlist merge on login
## feat/SHOP-398-gift-cards...origin/feat/SHOP-398-gift-cards [ahead 2]
 M apps/storefront/app/(shop)/gift-cards/page.tsx
 M apps/storefront/components/GiftCardBalance.tsx
 M services/order-api/prisma/schema.prisma
 M services/order-api/src/routes/giftCards.ts
 M services/order-api/src/services/orderService.ts
 M services/order-api/src/types/order.ts
 M pnpm-lock.yaml
A  services/order-api/src/services/giftCards.ts
?? services/order-api/prisma/migrations/20240710_gift_cards/
?? services/order-api/src/routes/__tests__/giftCards.test.ts
?? apps/storefront/app/(shop)/gift-cards/loading.tsx
?? scratch.http
""",
    ),
    "stash@{2}",
    "In git stash list, which entry holds my nginx compression experiment?",
    "Where did I stash the half-finished work on compressing static files at the reverse proxy?",
    "which stash has the compression stuff?",
)

# --- source code and schemas ---------------------------------------------------------------------

_plant(
    read_scene(
        "services/inventory/src/reservation/mod.rs",
        """\
//! Stock reservations: short-lived holds that keep units aside while a customer checks out.

use std::time::Duration;

use chrono::{DateTime, Utc};
use sqlx::PgPool;
use tracing::{info, instrument};
use uuid::Uuid;

use crate::stock::{Ledger, Sku, WarehouseId};

pub mod sweeper;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, sqlx::Type)]
#[sqlx(transparent)]
pub struct HoldId(pub Uuid);

#[derive(Debug, thiserror::Error)]
pub enum ReserveError {
    #[error("sku {0} is not stocked in any warehouse")]
    UnknownSku(Sku),
    #[error("only {available} of {requested} units available")]
    Insufficient { requested: u32, available: u32 },
    #[error("hold duration {0:?} exceeds the configured maximum")]
    HoldTooLong(Duration),
    #[error(transparent)]
    Db(#[from] sqlx::Error),
}

#[derive(Debug, thiserror::Error)]
pub enum ReleaseError {
    #[error("hold {0:?} does not exist")]
    NotFound(HoldId),
    #[error("hold {0:?} was already turned into an allocation")]
    AlreadyCommitted(HoldId),
    #[error(transparent)]
    Db(#[from] sqlx::Error),
}

pub struct Reservations {
    pool: PgPool,
    ledger: Ledger,
    max_hold: Duration,
}

impl Reservations {
    pub fn new(pool: PgPool, ledger: Ledger, max_hold: Duration) -> Self {
        Self { pool, ledger, max_hold }
    }

    /// Puts `qty` units of `sku` aside for `hold_for`, from the first warehouse in the
    /// fallback order that has enough on hand.
    #[instrument(skip(self))]
    pub async fn reserve(
        &self,
        sku: &Sku,
        qty: u32,
        hold_for: Duration,
    ) -> Result<HoldId, ReserveError> {
        if hold_for > self.max_hold {
            return Err(ReserveError::HoldTooLong(hold_for));
        }
        let mut tx = self.pool.begin().await?;
        let warehouse = self.ledger.pick_warehouse(&mut tx, sku, qty).await?;
        let id = HoldId(Uuid::now_v7());
        let expires_at = Utc::now() + chrono::Duration::from_std(hold_for).expect("bounded");
        sqlx::query!(
            "INSERT INTO stock_holds (id, sku, warehouse, quantity, expires_at) \\
             VALUES ($1, $2, $3, $4, $5)",
            id.0,
            sku.as_str(),
            warehouse.as_str(),
            qty as i32,
            expires_at,
        )
        .execute(&mut *tx)
        .await?;
        self.ledger.add_reserved(&mut tx, sku, &warehouse, qty).await?;
        tx.commit().await?;
        info!(hold = ?id, %warehouse, "hold created");
        Ok(id)
    }

    /// Gives the units back. Releasing a released hold is not an error.
    pub async fn release(&self, hold: HoldId) -> Result<u32, ReleaseError> {
        let mut tx = self.pool.begin().await?;
        let released = self.ledger.release_hold(&mut tx, hold).await?;
        tx.commit().await?;
        Ok(released)
    }

    /// Pushes the expiry out by `by`, never past the configured maximum from creation.
    pub async fn extend(&self, hold: HoldId, by: Duration) -> Result<DateTime<Utc>, ReserveError> {
        self.ledger.extend_hold(&self.pool, hold, by, self.max_hold).await
    }

    /// Turns the hold into an allocation against `order_id`; returns the warehouse that ships it.
    pub async fn commit(&self, hold: HoldId, order_id: Uuid) -> Result<WarehouseId, ReleaseError> {
        self.ledger.commit_hold(&self.pool, hold, order_id).await
    }

    /// Releases every live hold whose expiry is before `now`; returns how many were released.
    pub async fn sweep_expired(&self, now: DateTime<Utc>) -> Result<u64, sqlx::Error> {
        sweeper::sweep(&self.pool, &self.ledger, now).await
    }
}
""",
    ),
    "Result<HoldId, ReserveError>",
    "In services/inventory/src/reservation/mod.rs, what does reserve() return?",
    "When the stock service puts units aside for a shopper, what type does that call hand back?",
    "what comes back from placing a hold?",
)

_plant(
    read_scene(
        "services/order-api/src/types/order.ts",
        """\
import type { Currency } from './money';

export type OrderStatus =
  | 'pending_payment'
  | 'paid'
  | 'partially_fulfilled'
  | 'fulfilled'
  | 'cancelled'
  | 'refunded';

export type PaymentStatus = 'requires_capture' | 'captured' | 'failed' | 'refunded' | 'partially_refunded';

export type FulfillmentStatus = 'unfulfilled' | 'allocated' | 'shipped' | 'delivered' | 'returned';

export interface ShippingAddress {
  name: string;
  line1: string;
  line2?: string;
  city: string;
  postcode: string;
  country: string; // ISO 3166-1 alpha-2
  phone?: string;
}

export interface OrderLine {
  id: string;
  sku: string;
  name: string;
  quantity: number;
  unitCents: number;
  discountCents: number;
  holdId?: string; // inventory reservation, until the order is paid
  fulfillment: FulfillmentStatus;
}

export interface OrderTotals {
  subtotalCents: number;
  discountCents: number;
  shippingCents: number;
  taxCents: number;
  totalCents: number;
}

export interface Order {
  id: string;
  number: number;
  customerId: string;
  status: OrderStatus;
  payment: PaymentStatus;
  channel: 'web' | 'ios' | 'android' | 'pos';
  currency: Currency;
  lines: OrderLine[];
  totals: OrderTotals;
  shippingAddress: ShippingAddress | null;
  couponCode?: string;
  giftCardIds: string[];
  placedAt: string; // ISO 8601
  updatedAt: string;
}

export interface PlaceOrderRequest {
  cartId: string;
  shippingAddress: ShippingAddress;
  paymentMethodId: string;
  couponCode?: string;
}
""",
    ),
    "'web' | 'ios' | 'android' | 'pos'",
    "In services/order-api/src/types/order.ts, what values can an order's channel field take?",
    "According to the Order type in the Node service, which places can an order come in from?",
    "where can orders originate?",
)

_plant(
    read_scene(
        "apps/storefront/lib/constants.ts",
        """\
// Storefront-wide constants. Prices are in minor units (cents) of the shop's base currency.

export const BASE_CURRENCY = 'EUR';
export const SUPPORTED_CURRENCIES = ['EUR', 'GBP', 'USD', 'SEK'] as const;

export const FREE_SHIPPING_THRESHOLD_CENTS = 7500;
export const STANDARD_SHIPPING_CENTS = 495;
export const EXPRESS_SHIPPING_CENTS = 1295;

export const MAX_CART_LINES = 50;
export const MAX_QTY_PER_LINE = 10;
export const CART_COOKIE = 'sf_cart';
export const CART_COOKIE_MAX_AGE_DAYS = 30;

export const SEARCH_DEBOUNCE_MS = 250;
export const SEARCH_PAGE_SIZE = 24;
export const TYPEAHEAD_SUGGESTIONS = 5;

export const RECENTLY_VIEWED_LIMIT = 12;
export const PDP_REVALIDATE_SECONDS = 300;
export const COLLECTION_REVALIDATE_SECONDS = 900;

export const LOW_STOCK_BADGE_BELOW = 5;

export const IMAGE_SIZES = {
  thumb: 96,
  card: 480,
  gallery: 1200,
} as const;
""",
    ),
    "7500",
    "What is FREE_SHIPPING_THRESHOLD_CENTS in the storefront's constants file?",
    "How much does a shopper need to spend before delivery stops costing them anything?",
    "when does shipping become free?",
)

_plant(
    read_scene(
        "services/inventory/migrations/20240611093000_create_stock_holds.sql",
        """\
-- Holds keep stock aside while a checkout is in progress.
CREATE TABLE stock_holds (
    id           UUID PRIMARY KEY,
    sku          TEXT        NOT NULL REFERENCES skus (sku),
    warehouse    TEXT        NOT NULL REFERENCES warehouses (code),
    quantity     INTEGER     NOT NULL CHECK (quantity > 0),
    order_id     UUID,
    created_at   TIMESTAMPTZ NOT NULL DEFAULT now(),
    expires_at   TIMESTAMPTZ NOT NULL,
    released_at  TIMESTAMPTZ,
    committed_at TIMESTAMPTZ,
    CONSTRAINT stock_holds_released_or_committed
        CHECK (released_at IS NULL OR committed_at IS NULL)
);

CREATE INDEX stock_holds_sku_warehouse_idx ON stock_holds (sku, warehouse);

-- The sweeper scans live holds by expiry.
CREATE INDEX stock_holds_live_expiry_idx
    ON stock_holds (expires_at)
    WHERE released_at IS NULL AND committed_at IS NULL;

-- One hold per order line once the order is known.
CREATE UNIQUE INDEX stock_holds_order_sku_uidx
    ON stock_holds (order_id, sku)
    WHERE order_id IS NOT NULL;

ALTER TABLE stock_levels
    ADD COLUMN reserved INTEGER NOT NULL DEFAULT 0 CHECK (reserved >= 0);

ALTER TABLE stock_levels
    ADD CONSTRAINT stock_levels_reserved_le_on_hand CHECK (reserved <= on_hand);
""",
    ),
    "WHERE released_at IS NULL AND committed_at IS NULL",
    "In the stock_holds migration, what's the WHERE clause on the index over expires_at?",
    "The index the cleanup job uses to find stale holds only covers some rows: which ones?",
    "which holds does the expiry index include?",
)

_plant(
    read_scene(
        "services/order-api/prisma/schema.prisma",
        """\
generator client {
  provider        = "prisma-client-js"
  previewFeatures = ["fullTextSearch"]
}

datasource db {
  provider = "postgresql"
  url      = env("DATABASE_URL")
}

enum OrderStatus {
  PENDING_PAYMENT
  PAID
  PARTIALLY_FULFILLED
  FULFILLED
  CANCELLED
  REFUNDED
}

model Customer {
  id        String    @id @default(uuid()) @db.Uuid
  email     String    @unique
  name      String?
  orders    Order[]
  addresses Address[]
  createdAt DateTime  @default(now())
}

model Address {
  id         String    @id @default(uuid()) @db.Uuid
  customerId String?   @db.Uuid
  customer   Customer? @relation(fields: [customerId], references: [id], onDelete: SetNull)
  line1      String
  line2      String?
  city       String
  postcode   String
  country    String    @db.Char(2)
  orders     Order[]
}

model Order {
  id                String      @id @default(uuid()) @db.Uuid
  number            Int         @unique @default(autoincrement())
  customerId        String      @db.Uuid
  customer          Customer    @relation(fields: [customerId], references: [id], onDelete: Restrict)
  shippingAddressId String?     @db.Uuid
  shippingAddress   Address?    @relation(fields: [shippingAddressId], references: [id], onDelete: SetNull)
  status            OrderStatus @default(PENDING_PAYMENT)
  channel           String
  currency          String      @db.Char(3)
  subtotalCents     Int
  discountCents     Int         @default(0)
  shippingCents     Int
  taxCents          Int
  totalCents        Int
  paymentIntentId   String?     @unique
  lines             OrderLine[]
  shipments         Shipment[]
  refunds           Refund[]
  placedAt          DateTime    @default(now())
  updatedAt         DateTime    @updatedAt

  @@index([customerId, placedAt(sort: Desc)])
  @@index([status])
}

model OrderLine {
  id            String    @id @default(uuid()) @db.Uuid
  orderId       String    @db.Uuid
  order         Order     @relation(fields: [orderId], references: [id], onDelete: Cascade)
  sku           String
  name          String
  quantity      Int
  unitCents     Int
  discountCents Int       @default(0)
  shipmentId    String?   @db.Uuid
  shipment      Shipment? @relation(fields: [shipmentId], references: [id], onDelete: SetNull)

  @@index([orderId])
}

model Shipment {
  id        String      @id @default(uuid()) @db.Uuid
  orderId   String      @db.Uuid
  order     Order       @relation(fields: [orderId], references: [id], onDelete: Restrict)
  carrier   String
  tracking  String?
  lines     OrderLine[]
  shippedAt DateTime?
}

model Refund {
  id          String   @id @default(uuid()) @db.Uuid
  orderId     String   @db.Uuid
  order       Order    @relation(fields: [orderId], references: [id], onDelete: Restrict)
  amountCents Int
  reason      String
  stripeId    String   @unique
  createdAt   DateTime @default(now())
}
""",
    ),
    "onDelete: Cascade",
    "In schema.prisma, what delete rule is on the relation from OrderLine to Order?",
    "If an order row gets deleted, what does the ORM schema say happens to its line items?",
    "what happens to lines when their order goes?",
)

# --- grep ----------------------------------------------------------------------------------------

_plant(
    grep_scene(
        "process.env.",
        "services/order-api/src",
        """\
services/order-api/src/config.ts:7:const env = process.env.NODE_ENV ?? 'development';
services/order-api/src/config.ts:11:  port: Number(process.env.PORT ?? 4000),
services/order-api/src/config.ts:12:  logLevel: process.env.LOG_LEVEL ?? 'info',
services/order-api/src/config.ts:15:    url: process.env.DATABASE_URL!,
services/order-api/src/config.ts:16:    poolMax: Number(process.env.DATABASE_POOL_MAX ?? 20),
services/order-api/src/config.ts:19:    url: process.env.REDIS_URL ?? 'redis://localhost:6379/0',
services/order-api/src/config.ts:20:    idempotencyTtl: process.env.IDEMPOTENCY_KEY_TTL ?? '24h',
services/order-api/src/config.ts:23:    brokers: (process.env.KAFKA_BROKERS ?? '').split(','),
services/order-api/src/config.ts:24:    clientId: process.env.KAFKA_CLIENT_ID ?? 'order-api',
services/order-api/src/config.ts:25:    ssl: process.env.KAFKA_SSL === 'true',
services/order-api/src/config.ts:28:    inventoryBaseUrl: process.env.INVENTORY_BASE_URL!,
services/order-api/src/config.ts:29:    taxServiceUrl: process.env.TAX_SERVICE_URL!,
services/order-api/src/config.ts:30:    taxTimeoutMs: Number(process.env.TAX_SERVICE_TIMEOUT_MS ?? 800),
services/order-api/src/features.ts:3:  splitShipments: process.env.FEATURE_SPLIT_SHIPMENTS === 'true',
services/order-api/src/features.ts:4:  giftCards: process.env.FEATURE_GIFT_CARDS === 'true',
services/order-api/src/payments/stripe.ts:14:export const stripe = new Stripe(\
process.env.STRIPE_SECRET_KEY!, {
services/order-api/src/payments/webhooks.ts:22:  const secret = process.env.STRIPE_WEBHOOK_SECRET;
services/order-api/src/payments/capture.ts:9:const CAPTURE_DELAY = process.env.PAYMENT_CAPTURE_DELAY ?? '2h';
services/order-api/src/server.ts:41:  if (process.env.NODE_ENV !== 'test') {
services/order-api/src/telemetry.ts:6:  serviceName: process.env.OTEL_SERVICE_NAME ?? 'order-api',
services/order-api/src/telemetry.ts:7:  endpoint: process.env.OTEL_EXPORTER_OTLP_ENDPOINT,
services/order-api/src/scripts/backfill-totals.ts:5:const DRY_RUN = process.env.DRY_RUN !== 'false';
""",
    ),
    "src/payments/stripe.ts:14",
    "Where did the grep for process.env find the Stripe secret key being read?",
    "Which file and line pull the card processor's API key (not the webhook one) out of the environment?",
    "where is the payment key loaded?",
)

_plant(
    grep_scene(
        "TODO|FIXME",
        "services/inventory/src",
        """\
services/inventory/src/main.rs:22:    // TODO: expose the build sha on /version
services/inventory/src/main.rs:58:    // TODO: graceful shutdown should wait for the consumer to commit
services/inventory/src/config.rs:31:    // TODO: validate fallback_order \
against the warehouses table at startup
services/inventory/src/api/mod.rs:17:// TODO: move auth into a tower layer
services/inventory/src/api/availability.rs:40:    // TODO: cache per-sku availability for a second or two
services/inventory/src/api/availability.rs:77:    // FIXME: closed warehouses still show up in the response
services/inventory/src/api/reserve.rs:33:    // TODO: accept an idempotency key from the order API
services/inventory/src/api/reserve.rs:91:    // TODO: 409 instead of 422 when the hold already exists
services/inventory/src/kafka/consumer.rs:44:    // TODO: make the batch size configurable
services/inventory/src/kafka/consumer.rs:118:        // FIXME: a rebalance\
 mid-batch can release the same hold twice
services/inventory/src/kafka/consumer.rs:167:    // TODO: dead-letter messages \
that fail to parse instead of skipping them
services/inventory/src/kafka/producer.rs:25:    // TODO: transactional producer once MSK is on 3.6 everywhere
services/inventory/src/reservation/mod.rs:71:        // TODO: pick the warehouse nearest the shipping address
services/inventory/src/reservation/sweeper.rs:29:    // TODO: metrics for released quantity, not just count
services/inventory/src/reservation/sweeper.rs:64:    // FIXME: the sweep and commit can race on \
the same hold; needs SELECT ... FOR UPDATE
services/inventory/src/stock/ledger.rs:12:// TODO: split the audit log into its own table
services/inventory/src/stock/ledger.rs:96:        // TODO: batch the level updates
services/inventory/src/stock/level.rs:8:// TODO: derive Default once Level has no invariants
services/inventory/src/warehouse.rs:15:// TODO: warehouse opening hours
services/inventory/src/warehouse.rs:52:    // FIXME: code comparison is case-sensitive
services/inventory/src/sku.rs:19:// TODO: support bundle SKUs (SKU-BNDL-*)
""",
    ),
    "src/kafka/consumer.rs:118",
    "In the TODO/FIXME grep over the inventory source, where's the note about releasing a hold twice?",
    "Where did someone warn that a consumer-group reshuffle could hand reserved stock back twice?",
    "where's the double-release fixme?",
)

# --- HTTP ----------------------------------------------------------------------------------------

_plant(
    bash_scene(
        "curl -sv 'https://api.staging.shopfront.dev/v1/orders?limit=50' -H 'X-Client: cli-debug'",
        """\
*   Trying 104.18.22.107:443...
* Connected to api.staging.shopfront.dev (104.18.22.107) port 443
* ALPN: curl offers h2,http/1.1
* TLSv1.3 (OUT), TLS handshake, Client hello (1):
* TLSv1.3 (IN), TLS handshake, Server hello (2):
* SSL connection using TLSv1.3 / TLS_AES_256_GCM_SHA384 / X25519 / id-ecPublicKey
* ALPN: server accepted h2
* Server certificate:
*  subject: CN=*.staging.shopfront.dev
*  start date: Jun  2 00:00:00 2024 GMT
*  expire date: Aug 31 23:59:59 2024 GMT
* using HTTP/2
> GET /v1/orders?limit=50 HTTP/2
> Host: api.staging.shopfront.dev
> User-Agent: curl/8.5.0
> Accept: */*
> X-Client: cli-debug
>
< HTTP/2 429
< date: Tue, 09 Jul 2024 15:02:11 GMT
< content-type: application/json; charset=utf-8
< content-length: 118
< retry-after: 17
< x-ratelimit-limit: 120
< x-ratelimit-remaining: 0
< x-ratelimit-reset: 17
< x-request-id: req_01J2E7K9QF4XW3N8B6T5
< strict-transport-security: max-age=63072000; includeSubDomains
< vary: Origin, Accept-Encoding
< server: cloudflare
< cf-ray: 8a0b3c1d2e4f5a6b-DUB
<
{"error":"rate_limited","message":"Too many requests, retry in 17 seconds",\
"requestId":"req_01J2E7K9QF4XW3N8B6T5"}
* Connection #0 to host api.staging.shopfront.dev left intact
""",
    ),
    "req_01J2E7K9QF4XW3N8B6T5",
    "What x-request-id came back on the 429 from the staging orders endpoint?",
    "The API gave me an id when it throttled me; what was it, so I can look it up in the logs?",
    "id of the throttled request?",
)

_plant(
    bash_scene(
        "while read -r p; do curl -s -o /dev/null -w '%{http_code} %{time_total}s %{url_effective}\\n' "
        '"https://staging.shopfront.dev$p"; done < scripts/smoke-paths.txt',
        """\
200 0.412s https://staging.shopfront.dev/
200 0.388s https://staging.shopfront.dev/collections/new-in
200 0.451s https://staging.shopfront.dev/collections/sale
200 0.602s https://staging.shopfront.dev/products/heavyweight-hoodie
200 0.233s https://staging.shopfront.dev/cart
307 0.091s https://staging.shopfront.dev/checkout
307 0.088s https://staging.shopfront.dev/account
404 0.097s https://staging.shopfront.dev/gift-cards
200 0.874s https://staging.shopfront.dev/search?q=hoodie
200 0.019s https://staging.shopfront.dev/api/health
200 0.064s https://staging.shopfront.dev/api/cart
200 0.157s https://staging.shopfront.dev/api/products?page=2
502 5.013s https://staging.shopfront.dev/api/reviews/summary?sku=SKU-HOOD-GRY-L
200 0.122s https://staging.shopfront.dev/api/inventory/availability?sku=SKU-HOOD-GRY-L
200 0.310s https://staging.shopfront.dev/api/recommendations?sku=SKU-HOOD-GRY-L
200 0.045s https://staging.shopfront.dev/sitemap.xml
200 0.012s https://staging.shopfront.dev/robots.txt
200 0.027s https://staging.shopfront.dev/_next/static/chunks/main.js
200 0.010s https://staging.shopfront.dev/favicon.ico
308 0.014s https://staging.shopfront.dev/en-gb
200 0.366s https://staging.shopfront.dev/sv-se
""",
    ),
    "/api/reviews/summary",
    "In the curl loop over staging URLs, which path failed with a 5xx?",
    "When I pinged every storefront page on staging, which one did the proxy fail to reach its backend for?",
    "which staging endpoint was down?",
)

# --- infrastructure and CI -----------------------------------------------------------------------

_plant(
    bash_scene(
        "cd infra/terraform/envs/prod && terraform plan -no-color",
        """\
data.aws_caller_identity.current: Reading...
aws_vpc.main: Refreshing state... [id=vpc-0a1b2c3d4e5f60718]
data.aws_caller_identity.current: Read complete after 0s [id=318245790112]
module.eks.aws_eks_cluster.this: Refreshing state... [id=shopfront-prod]
module.msk.aws_msk_cluster.this: Refreshing state... [id=arn:aws:kafka:eu-west-1:318245790112:cluster/sf-prod]
aws_db_instance.main: Refreshing state... [id=shopfront-prod]
aws_elasticache_replication_group.sessions: Refreshing state... [id=shopfront-prod-sessions]
module.eks.aws_eks_node_group.default: Refreshing state... [id=shopfront-prod:default]

Terraform used the selected providers to generate the following execution plan. Resource actions are
indicated with the following symbols:
  + create
  ~ update in-place
-/+ destroy and then create replacement

Terraform will perform the following actions:

  # aws_cloudwatch_metric_alarm.order_api_5xx will be created
  + resource "aws_cloudwatch_metric_alarm" "order_api_5xx" {
      + alarm_name          = "shopfront-prod-order-api-5xx"
      + comparison_operator = "GreaterThanThreshold"
      + evaluation_periods  = 3
      + metric_name         = "HTTPCode_Target_5XX_Count"
      + namespace           = "AWS/ApplicationELB"
      + period              = 60
      + statistic           = "Sum"
      + threshold           = 25
      + arn                 = (known after apply)
      + id                  = (known after apply)
    }

  # aws_elasticache_replication_group.sessions must be replaced
-/+ resource "aws_elasticache_replication_group" "sessions" {
      ~ arn                      = "arn:aws:elasticache:eu-west-1:318245790112:rg:sf-prod" \
-> (known after apply)
      ~ engine_version_actual    = "7.1.0" -> (known after apply)
      ~ id                       = "shopfront-prod-sessions" -> (known after apply)
      ~ node_type                = "cache.r6g.large" -> "cache.r7g.large" # forces replacement
      ~ primary_endpoint_address = "master.sf-prod-sessions.x7k2mq.euw1.cache.amazonaws.com" \
-> (known after apply)
        num_cache_clusters       = 2
        # (18 unchanged attributes hidden)
    }

  # aws_security_group_rule.msk_from_eks will be created
  + resource "aws_security_group_rule" "msk_from_eks" {
      + from_port                = 9094
      + protocol                 = "tcp"
      + security_group_id        = "sg-0d4c7e1f2a3b4c5d6"
      + source_security_group_id = "sg-0a9b8c7d6e5f40312"
      + to_port                  = 9094
      + type                     = "ingress"
      + id                       = (known after apply)
    }

  # module.eks.aws_eks_node_group.default will be updated in-place
  ~ resource "aws_eks_node_group" "default" {
        id              = "shopfront-prod:default"
        tags            = {
            "Owner" = "platform-team"
        }
      ~ scaling_config {
          ~ desired_size = 3 -> 4
            # (2 unchanged attributes hidden)
        }
        # (14 unchanged attributes hidden)
    }

Plan: 3 to add, 1 to change, 1 to destroy.

─────────────────────────────────────────────────────────────────────────────

Note: You didn't use the -out option to save this plan, so Terraform can't guarantee to take exactly
these actions if you run "terraform apply" now.
""",
    ),
    "aws_elasticache_replication_group.sessions",
    "In the prod terraform plan, which resource was going to be replaced?",
    "What did the plan want to tear down and recreate in production?",
    "what is terraform about to rebuild?",
)

_plant(
    bash_scene(
        "kubectl get pods -n shopfront",
        """\
NAME                                 READY   STATUS             RESTARTS         AGE
inventory-6b8d9f7c4-2lqzt            1/1     Running            0                3d4h
inventory-6b8d9f7c4-8hvxp            1/1     Running            0                3d4h
inventory-6b8d9f7c4-tm5rc            1/1     Running            1 (2d ago)       3d4h
kafka-ui-5f7d8c9b6-qq2vw             1/1     Running            0                9d
nginx-edge-84c6d5f9b-4kz7m           1/1     Running            0                6d
nginx-edge-84c6d5f9b-wq2rj           1/1     Running            0                6d
order-api-7d9f8c6b5-9jfkd            1/1     Running            0                47m
order-api-7d9f8c6b5-x2kqp            0/1     CrashLoopBackOff   14 (3m12s ago)   47m
order-api-7d9f8c6b5-zr4nw            1/1     Running            0                47m
order-api-migrate-28677340-v8xhn     0/1     Completed          0                48m
order-enricher-6c9b7d8f5-5gnxd       1/1     Running            0                2d1h
order-enricher-6c9b7d8f5-lp9tc       1/1     Running            0                2d1h
search-indexer-7f4b9c6d8-h2mzs       1/1     Running            0                5d
storefront-5d7c8b9f6-6xvtn           1/1     Running            0                19h
storefront-5d7c8b9f6-bk4wq           1/1     Running            0                19h
storefront-5d7c8b9f6-pz8lm           1/1     Running            0                19h
storefront-5d7c8b9f6-r3jdc           0/1     Pending            0                2m
tax-proxy-9b6c5d7f8-qm2xs            1/1     Running            0                12d
otel-collector-6d5f8b7c9-z7kq4       1/1     Running            2 (5d ago)       12d
""",
    ),
    "order-api-7d9f8c6b5-x2kqp",
    "Which pod was in a crash loop in kubectl get pods for the shopfront namespace?",
    "The order service pod that kept dying and restarting: what was its full name?",
    "which pod keeps restarting?",
)

_plant(
    bash_scene(
        "gh run view 9871234560",
        """\

X main CI · 9871234560
Triggered via push about 2 hours ago

JOBS
✓ changes in 9s (ID 27088410111)
✓ node (lint) in 1m12s (ID 27088410342)
✓ node (typecheck) in 58s (ID 27088410387)
✓ node (test (order-api)) in 2m40s (ID 27088410420)
✓ node (test (storefront)) in 1m58s (ID 27088410466)
X rust in 3m05s (ID 27088410503)
  ✓ Set up job
  ✓ Run actions/checkout@v4
  ✓ Run dtolnay/rust-toolchain@stable
  ✓ Run Swatinem/rust-cache@v2
  ✓ Run cargo fmt --check
  X Run cargo clippy --all-targets --locked -- -D warnings
  - Run cargo test --locked
  ✓ Post Run Swatinem/rust-cache@v2
  ✓ Post Run actions/checkout@v4
  ✓ Complete job
✓ e2e (1/4) in 4m41s (ID 27088410588)
✓ e2e (2/4) in 4m02s (ID 27088410602)
✓ e2e (3/4) in 5m17s (ID 27088410619)
✓ e2e (4/4) in 3m55s (ID 27088410633)

ANNOTATIONS
X this `impl` can be derived
rust: services/inventory/src/stock/level.rs#L12

X Process completed with exit code 101.
rust: .github#L1

! The `set-output` command is deprecated and will be disabled soon.
changes: .github#L1


To see what failed, try: gh run view 9871234560 --log-failed
View this run on GitHub: https://github.com/shopfront/shopfront/actions/runs/9871234560
""",
    ),
    "services/inventory/src/stock/level.rs#L12",
    "In gh run view, which file and line did the failing clippy annotation point at?",
    "The Rust linter failure that broke the pipeline on main: where in the code was it?",
    "where did CI's rust lint fail?",
)

# --- environment ---------------------------------------------------------------------------------

_plant(
    bash_scene(
        "node -v && npm -v && pnpm -v && rustc -Vv && cargo -V && docker --version && docker compose version "
        "&& terraform version && kubectl version --client",
        """\
v20.14.0
10.7.0
9.5.0
rustc 1.79.0 (129f3b996 2024-06-10)
binary: rustc
commit-hash: 129f3b9964af4d4a709d1383930ade12dfe7c081
commit-date: 2024-06-10
host: x86_64-unknown-linux-gnu
release: 1.79.0
LLVM version: 18.1.7
cargo 1.79.0 (ffa9cf99a 2024-06-03)
Docker version 26.1.4, build 5650f9b
Docker Compose version v2.27.1
Terraform v1.8.5
on linux_amd64
+ provider registry.terraform.io/hashicorp/aws v5.57.0
+ provider registry.terraform.io/hashicorp/random v3.6.2
Client Version: v1.29.6
Kustomize Version: v5.0.4-0.20230601165947-6ce0bf390ce3
""",
    ),
    "1.79.0",
    "What version did rustc -Vv report?",
    "Which release of the Rust compiler is installed on this machine?",
    "my local rust version?",
)

_plant(
    bash_scene(
        "cat /etc/os-release && uname -srmo && nproc && free -h && df -h /",
        """\
PRETTY_NAME="Ubuntu 22.04.4 LTS"
NAME="Ubuntu"
VERSION_ID="22.04"
VERSION="22.04.4 LTS (Jammy Jellyfish)"
VERSION_CODENAME=jammy
ID=ubuntu
ID_LIKE=debian
HOME_URL="https://www.ubuntu.com/"
SUPPORT_URL="https://help.ubuntu.com/"
BUG_REPORT_URL="https://bugs.launchpad.net/ubuntu/"
PRIVACY_POLICY_URL="https://www.ubuntu.com/legal/terms-and-policies/privacy-policy"
UBUNTU_CODENAME=jammy
Linux 6.5.0-41-generic x86_64 GNU/Linux
16
               total        used        free      shared  buff/cache   available
Mem:            31Gi        11Gi       3.2Gi       412Mi        16Gi        19Gi
Swap:          2.0Gi       118Mi       1.9Gi
Filesystem      Size  Used Avail Use% Mounted on
/dev/nvme0n1p2  468G  301G  144G  68% /
""",
    ),
    "6.5.0-41-generic",
    "What kernel release did uname report?",
    "Which Linux kernel version is this dev machine running?",
    "what kernel are we on?",
)

FACTS: tuple[PlantedFact, ...] = tuple(_FACTS)


# --- distractors ---------------------------------------------------------------------------------

_HEX = "0123456789abcdef"
_B32 = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_POD = "bcdfghjklmnpqrstvwxz2456789"


def _hex(rng: random.Random, n: int) -> str:
    return "".join(rng.choice(_HEX) for _ in range(n))


def _pod_suffix(rng: random.Random) -> str:
    return "".join(rng.choice(_POD) for _ in range(9)) + "-" + "".join(rng.choice(_POD) for _ in range(5))


_COMPONENTS = (
    "ProductGallery",
    "SizePicker",
    "WishlistButton",
    "ReviewStars",
    "CollectionGrid",
    "FooterNav",
    "NewsletterSignup",
    "StoreLocator",
    "PromoBanner",
    "BreadcrumbTrail",
    "ColorSwatches",
    "DeliveryPromise",
)
_PROPS = (
    ("sku", "string"),
    ("title", "string"),
    ("priceCents", "number"),
    ("compareAtCents", "number | null"),
    ("images", "ProductImage[]"),
    ("selected", "string | undefined"),
    ("onChange", "(value: string) => void"),
    ("variant", "'compact' | 'full'"),
    ("className", "string"),
    ("rating", "number"),
    ("count", "number"),
    ("href", "string"),
    ("locale", "Locale"),
    ("disabled", "boolean"),
)
_CLASSES = (
    "flex items-center gap-2",
    "grid grid-cols-2 gap-4 md:grid-cols-4",
    "text-sm text-neutral-600",
    "rounded-lg border border-neutral-200 p-4",
    "mt-6 space-y-3",
    "font-medium tracking-tight",
    "sr-only",
    "inline-flex h-10 items-center px-4",
)


def _d_component(rng: random.Random) -> Scene:
    name = rng.choice(_COMPONENTS)
    props = rng.sample(_PROPS, rng.randint(3, 7))
    lines = ["'use client';", "", "import { useState } from 'react';", "import clsx from 'clsx';"]
    lines += ["import { formatMoney } from '@/lib/money';", "", f"export interface {name}Props {{"]
    lines += [f"  {p}: {t};" for p, t in props]
    lines += ["}", "", f"export function {name}({{ {', '.join(p for p, _ in props)} }}: {name}Props) {{"]
    lines += [f"  const [open, setOpen] = useState({rng.choice(['false', 'true'])});", ""]
    lines += ["  return (", f"    <div className={{clsx('{rng.choice(_CLASSES)}', open && 'is-open')}}>"]
    for _ in range(rng.randint(4, 14)):
        tag = rng.choice(["span", "p", "li", "button", "div"])
        lines.append(f'      <{tag} className="{rng.choice(_CLASSES)}">{{{rng.choice(props)[0]}}}</{tag}>')
    lines += [
        '      <button type="button" onClick={() => setOpen(!open)}>',
        "        {open ? 'Close' : 'More'}",
        "      </button>",
        "    </div>",
        "  );",
        "}",
    ]
    return read_scene(f"apps/storefront/components/{name}.tsx", "\n".join(lines))


def _d_order_config(rng: random.Random) -> Scene:
    env = rng.choice(["staging", "test", "local", "loadtest"])
    lines = [
        "{",
        '  "server": {',
        f'    "port": {rng.choice([4000, 4100, 8080])},',
        f'    "requestTimeoutMs": {rng.choice([10000, 15000, 20000, 45000])}',
        "  },",
        '  "database": {',
        f'    "poolMin": {rng.randint(0, 4)},',
        f'    "poolMax": {rng.choice([5, 8, 10, 16, 30])},',
        f'    "statementTimeoutMs": {rng.choice([3000, 5000, 10000])}',
        "  },",
        '  "payments": {',
        f'    "captureMethod": "{rng.choice(["manual", "automatic"])}",',
        f'    "maxRetries": {rng.choice([0, 1, 3])},',
        f'    "webhookToleranceSeconds": {rng.choice([120, 300, 600])}',
        "  },",
        '  "inventory": {',
        f'    "baseUrl": "http://inventory.shopfront-{env}.svc.cluster.local:8080",',
        f'    "reserveTimeoutMs": {rng.choice([1000, 2000, 2500, 3000])},',
        f'    "holdSeconds": {rng.choice([300, 600, 1200])}',
        "  },",
        '  "rateLimit": {',
        f'    "windowMs": {rng.choice([10000, 30000, 60000])},',
        f'    "max": {rng.choice([60, 200, 500, 1000])}',
        "  },",
        '  "logging": {',
        f'    "level": "{rng.choice(["debug", "info", "warn"])}"',
        "  }",
        "}",
    ]
    return read_scene(f"services/order-api/config/{env}.json", "\n".join(lines))


_DEPLOYS = (
    ("inventory", 3),
    ("order-api", 3),
    ("order-enricher", 2),
    ("storefront", 4),
    ("search-indexer", 1),
    ("nginx-edge", 2),
    ("tax-proxy", 1),
    ("otel-collector", 1),
    ("kafka-ui", 1),
    ("recommendations", 2),
)


def _d_pods(rng: random.Random) -> Scene:
    ns = rng.choice(["shopfront-staging", "shopfront-dev", "shopfront-loadtest"])
    rows = ["NAME                                 READY   STATUS      RESTARTS   AGE"]
    for deploy, count in _DEPLOYS:
        rs = "".join(rng.choice(_POD) for _ in range(rng.choice([9, 10])))
        for _ in range(count):
            suffix = "".join(rng.choice(_POD) for _ in range(5))
            name = f"{deploy}-{rs}-{suffix}"
            age = f"{rng.randint(1, 20)}{rng.choice(['d', 'h', 'm'])}"
            rows.append(f"{name:<37}1/1     Running     {rng.choice([0, 0, 0, 1])}          {age}")
    return bash_scene(f"kubectl get pods -n {ns}", "\n".join(rows))


_COMMIT_MESSAGES = (
    "storefront: skeleton loaders on collection pages",
    "storefront: lazy-load the review widget",
    "storefront: fix focus trap in the cart drawer",
    "storefront: sitemap includes sale collections",
    "order-api: log the cart id on checkout failures",
    "order-api: zod schema for address updates",
    "order-api: cancel unpaid orders after an hour",
    "order-api: expose /v1/orders/:id/timeline",
    "inventory: metrics for hold latency",
    "inventory: reject negative adjustments",
    "inventory: warehouse codes are upper case",
    "inventory: clippy fixes",
    "pipeline: schema registry subject naming",
    "pipeline: batch size for the enricher",
    "infra: staging node group on spot instances",
    "infra: bump aws provider",
    "infra: grafana dashboard for checkout funnel",
    "ci: cache playwright browsers",
    "docs: runbook for stuck reservations",
    "chore: renovate groups for eslint packages",
)
_LOG_PATHS = (
    "apps/storefront/components",
    "apps/storefront/app",
    "services/inventory/src/api",
    "services/inventory/src/stock",
    "services/order-api/src/routes",
    "infra/terraform/modules/eks",
    "pipeline/enricher",
    "docs",
)


def _d_git_log(rng: random.Random) -> Scene:
    n = rng.randint(20, 30)
    path = rng.choice(_LOG_PATHS)
    rows = [f"{_hex(rng, 7)} {rng.choice(_COMMIT_MESSAGES)}" for _ in range(n)]
    return bash_scene(f"git log --oneline -{n} -- {path}", "\n".join(rows))


_RUST_MODULES = {
    "api": ("health_is_ok", "availability_is_cached", "reserve_validates_body", "errors_are_json"),
    "stock": ("level_adds_up", "ledger_rejects_negative", "audit_entry_written", "adjust_is_atomic"),
    "warehouse": ("codes_are_upper_case", "fallback_is_stable", "closed_is_skipped", "parse_roundtrip"),
    "sku": ("parses_colour_and_size", "rejects_empty", "display_roundtrip", "bundle_prefix"),
}


def _d_cargo_test(rng: random.Random) -> Scene:
    module = rng.choice(sorted(_RUST_MODULES))
    names = [f"{module}::tests::{t}" for t in _RUST_MODULES[module]]
    names += [f"{module}::{sub}::tests::{t}" for sub in ("query", "model") for t in _RUST_MODULES[module]]
    rng.shuffle(names)
    secs = f"{rng.randint(3, 40)}.{rng.randint(10, 99)}"
    lines = [
        "   Compiling inventory v0.9.0 (/home/dev/shopfront/services/inventory)",
        f"    Finished `test` profile [unoptimized + debuginfo] target(s) in {secs}s",
        f"     Running unittests src/lib.rs (target/debug/deps/inventory-{_hex(rng, 16)})",
        "",
        f"running {len(names)} tests",
    ]
    lines += [f"test {n} ... ok" for n in names]
    lines += [
        "",
        f"test result: ok. {len(names)} passed; 0 failed; 0 ignored; 0 measured; "
        f"{rng.randint(10, 30)} filtered out; finished in 0.{rng.randint(10, 99)}s",
    ]
    return bash_scene(f"cd services/inventory && cargo test {module}::", "\n".join(lines))


_GREPS = (
    (
        "useQuery(",
        "apps/storefront",
        (
            "components/ProductGrid.tsx",
            "app/(shop)/account/page.tsx",
            "hooks/useCart.ts",
            "hooks/useSearch.ts",
        ),
        ("  const { data, isLoading } = useQuery({", "  const query = useQuery({ queryKey: ['cart'],"),
    ),
    (
        "tracing::warn!",
        "services/inventory",
        ("src/api/reserve.rs", "src/stock/ledger.rs", "src/kafka/producer.rs", "src/warehouse.rs"),
        (
            '        tracing::warn!(%sku, "level below zero, clamping");',
            '    tracing::warn!(?err, "retrying");',
        ),
    ),
    (
        "producer.send(",
        "services/order-api",
        ("src/kafka/publisher.ts", "src/routes/orders.ts", "src/routes/cancel.ts", "src/services/outbox.ts"),
        (
            "    await producer.send({ topic, messages: [msg] });",
            "  return producer.send({ topic, messages });",
        ),
    ),
    (
        "revalidate",
        "apps/storefront/app",
        (
            "(shop)/page.tsx",
            "(shop)/collections/[handle]/page.tsx",
            "(shop)/sale/page.tsx",
            "api/revalidate.ts",
        ),
        ("export const revalidate = 600;", "  revalidateTag(`collection:${handle}`);"),
    ),
    (
        "Idempotency-Key",
        "services",
        (
            "order-api/src/plugins/idempotency.ts",
            "order-api/src/routes/orders.ts",
            "inventory/src/api/mod.rs",
        ),
        ("  const key = req.headers['idempotency-key'];", "    // Idempotency-Key is optional for GETs"),
    ),
)


def _d_grep(rng: random.Random) -> Scene:
    pattern, root, files, texts = rng.choice(_GREPS)
    rows = []
    for _ in range(rng.randint(20, 40)):
        rows.append(f"{root}/{rng.choice(files)}:{rng.randint(3, 400)}:{rng.choice(texts)}")
    rows.sort()
    return grep_scene(pattern, root, "\n".join(rows))


_SKUS = ("SKU-TEE-WHT-S", "SKU-TEE-NVY-L", "SKU-CAP-BLK", "SKU-SOCK-3PK", "SKU-JKT-OLV-M", "SKU-BAG-TOTE")


def _d_curl_ok(rng: random.Random) -> Scene:
    sku = rng.choice(_SKUS)
    host = rng.choice(["api.staging.shopfront.dev", "api.dev.shopfront.dev"])
    rid = "req_01J" + "".join(rng.choice(_B32) for _ in range(17))
    ip = f"104.18.{rng.randint(1, 40)}.{rng.randint(2, 250)}"
    lines = [
        f"*   Trying {ip}:443...",
        f"* Connected to {host} ({ip}) port 443",
        "* ALPN: server accepted h2",
        "* using HTTP/2",
        f"> GET /v1/products/{sku} HTTP/2",
        f"> Host: {host}",
        "> User-Agent: curl/8.5.0",
        "> Accept: application/json",
        ">",
        "< HTTP/2 200",
        f"< date: {rng.choice(['Mon', 'Wed', 'Fri'])}, {rng.randint(10, 28)} Jun 2024 {rng.randint(8, 19)}:"
        f"{rng.randint(10, 59)}:{rng.randint(10, 59)} GMT",
        "< content-type: application/json; charset=utf-8",
        f"< cache-control: public, max-age={rng.choice([30, 60, 120])}",
        f"< x-ratelimit-limit: {rng.choice([300, 600])}",
        f"< x-ratelimit-remaining: {rng.randint(1, 299)}",
        f"< x-request-id: {rid}",
        f'< etag: W/"{_hex(rng, 12)}"',
        "< server: cloudflare",
        f"< cf-ray: {_hex(rng, 16)}-{rng.choice(['AMS', 'FRA', 'LHR'])}",
        "<",
        f'{{"sku":"{sku}","priceCents":{rng.randint(900, 9900)},"currency":"EUR",'
        f'"available":{rng.randint(0, 80)},"warehouses":["DUB1","AMS2"]}}',
        f"* Connection #0 to host {host} left intact",
    ]
    return bash_scene(f"curl -sv https://{host}/v1/products/{sku}", "\n".join(lines))


_INSTANCE = ("m6i.large", "m6i.xlarge", "t3.large", "m7g.large")
_DB = ("db.t4g.medium", "db.t4g.large", "db.r6g.large", "db.m6g.large")
_CACHE = ("cache.t4g.small", "cache.t4g.medium", "cache.r6g.large")
_BROKER = ("kafka.t3.small", "kafka.m5.xlarge", "kafka.m7g.xlarge")


def _d_tfvars(rng: random.Random) -> Scene:
    env = rng.choice(["staging", "dev", "loadtest"])
    octet = rng.randint(41, 60)
    lines = [
        f'environment = "{env}"',
        'aws_region  = "eu-west-1"',
        'project     = "shopfront"',
        "",
        f'vpc_cidr = "10.{octet}.0.0/16"',
        "",
        "# EKS",
        'eks_cluster_version     = "1.29"',
        f'eks_node_instance_types = ["{rng.choice(_INSTANCE)}"]',
        f"eks_node_min_size       = {rng.randint(1, 2)}",
        f"eks_node_max_size       = {rng.randint(4, 8)}",
        "",
        "# RDS",
        f'rds_instance_class    = "{rng.choice(_DB)}"',
        f"rds_allocated_storage = {rng.choice([50, 100, 200])}",
        "rds_multi_az          = false",
        f"rds_backup_retention  = {rng.choice([1, 3, 7])}",
        "",
        "# ElastiCache",
        f'redis_node_type = "{rng.choice(_CACHE)}"',
        "",
        "# MSK",
        f'msk_broker_instance_type = "{rng.choice(_BROKER)}"',
        f"msk_ebs_volume_size      = {rng.choice([100, 200, 300])}",
        "",
        f'storefront_domain = "{env}.shopfront.dev"',
        f'api_domain        = "api.{env}.shopfront.dev"',
    ]
    return read_scene(f"infra/terraform/envs/{env}/terraform.tfvars", "\n".join(lines))


_UI_TESTS = (
    "Button",
    "Dialog",
    "Drawer",
    "Price",
    "Rating",
    "Select",
    "Tabs",
    "Toast",
    "Tooltip",
    "Carousel",
    "Accordion",
    "Badge",
)


def _d_vitest_pass(rng: random.Random) -> Scene:
    files = rng.sample(_UI_TESTS, rng.randint(8, 12))
    counts = [rng.randint(2, 14) for _ in files]
    lines = [
        "",
        "> @shopfront/ui@0.3.0 test /home/dev/shopfront/packages/ui",
        "> vitest --run",
        "",
        " RUN  v1.6.0 /home/dev/shopfront/packages/ui",
        "",
    ]
    lines += [
        f" ✓ src/{f}/{f}.test.tsx  ({c} tests) {rng.randint(5, 240)}ms"
        for f, c in zip(files, counts, strict=True)
    ]
    lines += [
        "",
        f" Test Files  {len(files)} passed ({len(files)})",
        f"      Tests  {sum(counts)} passed ({sum(counts)})",
        f"   Start at  {rng.randint(8, 18):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}",
        f"   Duration  {rng.randint(1, 6)}.{rng.randint(10, 99)}s",
    ]
    return bash_scene("pnpm --filter @shopfront/ui test -- --run", "\n".join(lines))


_LOG_MESSAGES = {
    "storefront": (
        '"msg":"GET /collections/new-in 200","durationMs":{n}',
        '"msg":"ISR revalidated","path":"/products/canvas-tote","durationMs":{n}',
        '"msg":"GET /api/cart 200","durationMs":{n}',
        '"msg":"image optimizer cache miss","width":480,"durationMs":{n}',
    ),
    "search-indexer": (
        '"msg":"indexed batch","docs":{n}',
        '"msg":"consumer lag","lag":{n}',
        '"msg":"opensearch bulk ok","items":{n}',
    ),
    "order-enricher": (
        '"msg":"enriched order","segment":"returning","durationMs":{n}',
        '"msg":"segment cache hit ratio","ratio":0.{n}',
        '"msg":"committed offsets","partition":{n}',
    ),
}


def _d_logs(rng: random.Random) -> Scene:
    svc = rng.choice(sorted(_LOG_MESSAGES))
    day = rng.randint(1, 8)
    hour = rng.randint(0, 23)
    rows = []
    minute = rng.randint(0, 30)
    for _ in range(rng.randint(20, 35)):
        minute = min(59, minute + rng.randint(0, 1))
        ts = f"2024-07-0{day}T{hour:02d}:{minute:02d}:{rng.randint(0, 59):02d}.{rng.randint(0, 999):03d}Z"
        level = rng.choice(["info", "info", "info", "debug"])
        body = rng.choice(_LOG_MESSAGES[svc]).replace("{n}", str(rng.randint(1, 900)))
        rows.append(f'{ts} {{"level":"{level}",{body}}}')
    rows.sort()
    since = rng.choice([15, 20, 45, 60])
    return bash_scene(
        f"kubectl logs -n shopfront deploy/{svc} --since={since}m --timestamps", "\n".join(rows)
    )


_TF_RESOURCES = (
    ("aws_cloudwatch_log_group", "order_api", "retention_in_days", "14", "30"),
    ("aws_s3_bucket_lifecycle_configuration", "assets", "expiration_days", "90", "180"),
    ("aws_eks_node_group", "spot", "desired_size", "2", "3"),
    ("aws_db_parameter_group", "main", "max_connections", "200", "300"),
    ("aws_msk_configuration", "this", "log_retention_hours", "72", "168"),
    ("aws_cloudfront_distribution", "storefront", "default_ttl", "60", "300"),
)


def _d_tf_plan(rng: random.Random) -> Scene:
    env = rng.choice(["staging", "dev"])
    chosen = rng.sample(_TF_RESOURCES, rng.randint(2, 4))
    lines = [f"aws_vpc.main: Refreshing state... [id=vpc-0{_hex(rng, 16)}]"]
    lines += [f"{t}.{n}: Refreshing state... [id={env}-{n}]" for t, n, *_ in chosen]
    lines += [
        "",
        "Terraform used the selected providers to generate the following execution plan. "
        "Resource actions are",
        "indicated with the following symbols:",
        "  ~ update in-place",
        "",
        "Terraform will perform the following actions:",
    ]
    for type_, name, attr, old, new in chosen:
        lines += [
            "",
            f"  # {type_}.{name} will be updated in-place",
            f'  ~ resource "{type_}" "{name}" {{',
            f'        id = "{env}-{name}"',
            f"      ~ {attr} = {old} -> {new}",
            f"        # ({rng.randint(3, 20)} unchanged attributes hidden)",
            "    }",
        ]
    lines += ["", f"Plan: 0 to add, {len(chosen)} to change, 0 to destroy."]
    return bash_scene(f"cd infra/terraform/envs/{env} && terraform plan -no-color", "\n".join(lines))


_RUST_FILES = ("audit", "levels", "transfers", "receiving", "cycle_count", "allocation")


def _d_rust_src(rng: random.Random) -> Scene:
    name = rng.choice(_RUST_FILES)
    kind = "".join(part.capitalize() for part in name.split("_"))
    lines = [
        f"//! Warehouse {name.replace('_', ' ')}.",
        "",
        "use chrono::{DateTime, Utc};",
        "use serde::{Deserialize, Serialize};",
        "use sqlx::PgPool;",
        "",
        "use crate::stock::Sku;",
        "",
        "#[derive(Debug, Clone, Serialize, Deserialize)]",
        f"pub struct {kind}Entry {{",
        "    pub sku: Sku,",
        "    pub warehouse: String,",
        f"    pub quantity: {rng.choice(['i32', 'u32', 'i64'])},",
        "    pub at: DateTime<Utc>,",
        "}",
        "",
        f"pub struct {kind} {{",
        "    pool: PgPool,",
        "}",
        "",
        f"impl {kind} {{",
        "    pub fn new(pool: PgPool) -> Self {",
        "        Self { pool }",
        "    }",
    ]
    for verb in rng.sample(["list", "record", "undo", "summarise", "export"], rng.randint(2, 4)):
        ret = rng.choice(["Vec<{k}Entry>", "u64", "()", "Option<{k}Entry>"]).replace("{k}", kind)
        lines += [
            "",
            f"    pub async fn {verb}(&self, sku: &Sku) -> Result<{ret}, sqlx::Error> {{",
            f'        todo!("{verb} {name} for {{sku}}")',
            "    }",
        ]
    lines.append("}")
    return read_scene(f"services/inventory/src/warehouse/{name}.rs", "\n".join(lines))


_TEMPLATES: tuple[Callable[[random.Random], Scene], ...] = (
    _d_component,
    _d_order_config,
    _d_pods,
    _d_git_log,
    _d_cargo_test,
    _d_grep,
    _d_curl_ok,
    _d_tfvars,
    _d_vitest_pass,
    _d_logs,
    _d_tf_plan,
    _d_rust_src,
)

_ANSWERS = tuple(fact.answer for fact in FACTS)
# A distractor runs none of the facts' commands on none of their paths, and its output names neither.
_FACT_NAMES = frozenset(
    str(value) for fact in FACTS for key, value in fact.scene.args.items() if key in ("path", "command")
)
_FACT_TEXTS = tuple(
    str(fact.scene.args["path"] if fact.scene.tool == "read_file" else fact.scene.args["command"])
    for fact in FACTS
    if fact.scene.tool in ("read_file", "bash")
)


def _acceptable(scene: Scene) -> bool:
    if any(str(value) in _FACT_NAMES for value in scene.args.values()):
        return False
    return not any(answer in scene.output for answer in _ANSWERS) and not any(
        name in scene.output for name in _FACT_TEXTS
    )


def distractors(seed: int, count: int) -> list[Scene]:
    """`count` look-alike outputs of the project holding no fact's answer, path or command."""
    return draw(seed, count, _TEMPLATES, _acceptable)


def draw(
    seed: int,
    count: int,
    templates: Sequence[Callable[[random.Random], Scene]],
    acceptable: Callable[[Scene], bool],
) -> list[Scene]:
    """`count` distinct scenes from `templates`, each `acceptable`, the same for the same seed."""
    rng = random.Random(seed)
    scenes: list[Scene] = []
    seen: set[tuple[str, str]] = set()
    while len(scenes) < count:
        scene = rng.choice(templates)(rng)
        key = (repr(sorted(scene.args.items())), scene.output)
        if key in seen or not acceptable(scene):
            continue
        seen.add(key)
        scenes.append(scene)
    return scenes
