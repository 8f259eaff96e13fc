"""A second held-out set of planted facts for the recall probe, from a project unlike the other sets'.

The project is "fieldlog", a field-service platform: a Django and Celery backend (backend/), a Kotlin
Android app for technicians (android/), a Go telemetry ingester for the vehicle trackers (ingest/)
with its Postgres migrations, a GitHub Actions and Ansible deploy (deploy/), and a Python reporting
ETL job (etl/). Each fact is one tool output of that project (a file read, a shell command, a grep)
with one short verbatim answer in it, among other values of the same kind, and three questions a
developer might ask about it long after the output left the context: a direct one that may name the
file or command, a paraphrase in the developer's own words, and a short vague one. None of the
questions holds its answer.

`distractors(seed, count)` makes look-alike outputs of the same project (other files, other
environments, passing runs) that hold no answer and none of the facts' paths or commands; the same
seed gives the same scenes.

Pure data and the standard library; the shapes of a scene and a fact, and the helpers that build a
scene as the agent's tools print it, are the first held-out set's. Nothing here imports the agent
or its tests.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from benchmarks.recall_facts_heldout import PlantedFact, Scene, bash_scene, draw, grep_scene, read_scene

_FACTS: list[PlantedFact] = []


def _plant(scene: Scene, answer: str, direct: str, paraphrase: str, vague: str) -> None:
    _FACTS.append(PlantedFact(scene, answer, (direct, paraphrase, vague)))


# --- configuration -------------------------------------------------------------------------------

_plant(
    read_scene(
        "ingest/config/ingest.toml",
        """\
# fieldlog telemetry ingester: production defaults.
# Every key can be overridden with INGEST_<SECTION>_<KEY>, e.g. INGEST_BATCH_SIZE=1000.

[server]
listen_addr = ":7352"
read_timeout = "15s"
write_timeout = "15s"
idle_timeout = "90s"
max_body_bytes = 1048576

[admin]
listen_addr = "127.0.0.1:7390"
enable_pprof = false

[metrics]
listen_addr = ":9464"
path = "/metrics"

[decode]
max_frame_bytes = 8192
reject_future_fixes = "2m"
min_satellites = 4

[batch]
size = 500
flush_interval = "750ms"
workers = 6

[postgres]
dsn_env = "INGEST_DB_DSN"
max_conns = 24
min_conns = 4
copy_timeout = "10s"

[nats]
url = "nats://nats-01.dc2.fieldlog.internal:4222"
subject_prefix = "telemetry.v2"
stream = "TELEMETRY"
ack_wait = "30s"

[dedupe]
window = "5m"
max_entries = 200000
""",
    ),
    ":7352",
    "In ingest/config/ingest.toml, what listen address does the [server] section use?",
    "Which TCP port do the vehicle trackers send their location data to on the Go telemetry service?",
    "the ingester port?",
)

_plant(
    read_scene(
        "backend/fieldlog/settings/base.py",
        """\
\"\"\"Settings shared by every environment; the environment modules star-import this one.\"\"\"

from pathlib import Path

import environ

env = environ.Env()
BASE_DIR = Path(__file__).resolve().parent.parent.parent

SECRET_KEY = env("DJANGO_SECRET_KEY")
DEBUG = env.bool("DJANGO_DEBUG", default=False)
ALLOWED_HOSTS = env.list("DJANGO_ALLOWED_HOSTS", default=[])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.staticfiles",
    "django.contrib.gis",
    "rest_framework",
    "django_celery_beat",
    "django_celery_results",
    "fieldlog.customers",
    "fieldlog.assets",
    "fieldlog.jobs",
    "fieldlog.dispatch",
    "fieldlog.technicians",
    "fieldlog.invoices",
    "fieldlog.notifications",
]

DATABASES = {"default": env.db("DATABASE_URL")}
DATABASES["default"]["CONN_MAX_AGE"] = 120
DATABASES["default"]["OPTIONS"] = {"connect_timeout": 5}

TIME_ZONE = "Europe/London"
USE_TZ = True

# --- Celery ---
CELERY_BROKER_URL = env("CELERY_BROKER_URL")
CELERY_RESULT_BACKEND = env("CELERY_RESULT_BACKEND", default="django-db")
CELERY_BROKER_HEARTBEAT = 20
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SOFT_TIME_LIMIT = 1200
CELERY_TASK_TIME_LIMIT = 1290
CELERY_TASK_DEFAULT_QUEUE = "default"
CELERY_TASK_ROUTES = {
    "fieldlog.notifications.tasks.*": {"queue": "notifications"},
    "fieldlog.invoices.tasks.*": {"queue": "reports"},
    "fieldlog.dispatch.tasks.*": {"queue": "dispatch"},
}
CELERY_BEAT_SCHEDULER = "django_celery_beat.schedulers:DatabaseScheduler"
CELERY_RESULT_EXPIRES = 86400

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["fieldlog.auth.DeviceTokenAuthentication"],
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.CursorPagination",
    "PAGE_SIZE": 50,
}
""",
    ),
    "1290",
    "In backend/fieldlog/settings/base.py, what is CELERY_TASK_TIME_LIMIT?",
    "After how many seconds does the task queue forcibly kill a background job that is still running?",
    "hard kill limit for tasks?",
)

_plant(
    read_scene(
        "deploy/ansible/inventories/production/group_vars/all.yml",
        """\
---
# Production: dc2 is primary, dc3 is the warm standby.
fieldlog_env: production
fieldlog_domain: app.fieldlog.app
fieldlog_release_dir: /srv/fieldlog/releases
fieldlog_keep_releases: 5
deploy_user: fieldlog
python_version: "3.11"

postgres_primary_host: pg-main-02.dc2.fieldlog.internal
postgres_replica_hosts:
  - pg-main-03.dc2.fieldlog.internal
  - pg-main-01.dc3.fieldlog.internal
postgres_port: 6432  # pgbouncer on each app host
postgres_db: fieldlog
postgres_user: fieldlog_app

rabbitmq_host: mq-01.dc2.fieldlog.internal
rabbitmq_vhost: fieldlog
redis_host: cache-01.dc2.fieldlog.internal
nats_url: nats://nats-01.dc2.fieldlog.internal:4222

gunicorn_workers: 9
gunicorn_timeout: 45
celery_queues:
  - name: default
    concurrency: 8
  - name: notifications
    concurrency: 4
  - name: dispatch
    concurrency: 4
  - name: reports
    concurrency: 2

sentry_environment: production
sentry_traces_sample_rate: 0.05

backup_bucket: s3://fieldlog-backups-prod
backup_retention_days: 35
""",
    ),
    "pg-main-02",
    "In the production group_vars/all.yml, which host is the Postgres primary?",
    "On the live environment, which machine do the playbooks point the Django app at as its main "
    "writable database?",
    "prod db host?",
)

_plant(
    read_scene(
        "backend/.env.example",
        """\
# Copy to backend/.env for local development. Never commit real secrets.
DJANGO_SETTINGS_MODULE=fieldlog.settings.local
DJANGO_SECRET_KEY=change-me
DJANGO_DEBUG=true
DJANGO_ALLOWED_HOSTS=localhost,127.0.0.1,10.0.2.2

DATABASE_URL=postgis://fieldlog:fieldlog@localhost:5433/fieldlog
CELERY_BROKER_URL=amqp://fieldlog:fieldlog@localhost:5673/fieldlog
CELERY_RESULT_BACKEND=django-db
REDIS_URL=redis://localhost:6380/1

# Email (mailpit catches everything locally: http://localhost:8025)
EMAIL_BACKEND=django.core.mail.backends.smtp.EmailBackend
EMAIL_HOST=localhost
EMAIL_PORT=1025
DEFAULT_FROM_EMAIL=visits@fieldlog.app
SERVER_EMAIL=alerts@fieldlog.app
SUPPORT_EMAIL=help@fieldlog.app
INVOICE_REPLY_TO=accounts@fieldlog.app

# SMS
TWILIO_ACCOUNT_SID=
TWILIO_AUTH_TOKEN=
TWILIO_FROM_NUMBER=+441632960418

# Maps and geocoding
MAPBOX_TOKEN=
GEOCODER=nominatim
NOMINATIM_URL=http://localhost:8088

# Attachments (minio locally)
AWS_S3_ENDPOINT_URL=http://localhost:9000
AWS_STORAGE_BUCKET_NAME=fieldlog-dev-attachments
AWS_ACCESS_KEY_ID=minio
AWS_SECRET_ACCESS_KEY=minio-secret

SENTRY_DSN=
SLA_WARNING_MINUTES=30
""",
    ),
    "visits@fieldlog.app",
    "In backend/.env.example, what is DEFAULT_FROM_EMAIL set to?",
    "Which mailbox do appointment emails to customers come from in a local setup?",
    "the sender address?",
)

_plant(
    read_scene(
        "etl/config/schedules.json",
        """\
{
  "timezone": "Europe/London",
  "warehouse": {
    "path": "/srv/etl/warehouse/fieldlog.duckdb",
    "threads": 4,
    "memory_limit": "6GB"
  },
  "source": {
    "dsn_env": "ETL_SOURCE_DSN",
    "replica_only": true,
    "fetch_size": 20000
  },
  "jobs": [
    {
      "name": "visits_daily",
      "schedule": "10 2 * * *",
      "lookback_days": 3,
      "output": "s3://fieldlog-analytics/visits/"
    },
    {
      "name": "job_costs",
      "schedule": "17 4 * * *",
      "lookback_days": 35,
      "output": "s3://fieldlog-analytics/job_costs/"
    },
    {
      "name": "technician_utilisation",
      "schedule": "45 5 * * 1",
      "lookback_days": 28,
      "output": "s3://fieldlog-analytics/utilisation/"
    },
    {
      "name": "first_time_fix",
      "schedule": "30 6 1 * *",
      "lookback_days": 62,
      "output": "s3://fieldlog-analytics/first_time_fix/"
    },
    {
      "name": "parts_consumption",
      "schedule": "0 */6 * * *",
      "lookback_days": 1,
      "output": "s3://fieldlog-analytics/parts/"
    }
  ],
  "alerts": {
    "slack_channel": "#data-alerts",
    "fail_after_retries": 2
  }
}
""",
    ),
    "17 4 * * *",
    "In etl/config/schedules.json, what cron schedule does job_costs have?",
    "At what time of night does the reporting export of labour and travel costs per work order kick off?",
    "when does the cost export run?",
)

_plant(
    read_scene(
        "deploy/ansible/roles/celery/templates/supervisor-celery.conf.j2",
        """\
; {{ ansible_managed }}
; One supervisor program per queue, so a stuck report cannot starve notifications.

[group:celery]
programs=celery-default,celery-notifications,celery-dispatch,celery-reports,celery-beat

[program:celery-default]
command={{ fieldlog_venv }}/bin/celery -A fieldlog worker -Q default -n default@%%h --concurrency={{ \
q.default }} --max-tasks-per-child=500
directory={{ fieldlog_current }}/backend
user={{ deploy_user }}
autostart=true
autorestart=true
stopasgroup=true
killasgroup=true
stopwaitsecs=330
stdout_logfile=/var/log/fieldlog/celery-default.log
redirect_stderr=true

[program:celery-notifications]
command={{ fieldlog_venv }}/bin/celery -A fieldlog worker -Q notifications -n notifications@%%h \
--concurrency={{ q.notifications }}
directory={{ fieldlog_current }}/backend
user={{ deploy_user }}
autorestart=true
stopasgroup=true
stopwaitsecs=60
stdout_logfile=/var/log/fieldlog/celery-notifications.log
redirect_stderr=true

[program:celery-dispatch]
command={{ fieldlog_venv }}/bin/celery -A fieldlog worker -Q dispatch -n dispatch@%%h --concurrency={{ \
q.dispatch }}
directory={{ fieldlog_current }}/backend
user={{ deploy_user }}
autorestart=true
stopasgroup=true
stopwaitsecs=120
stdout_logfile=/var/log/fieldlog/celery-dispatch.log
redirect_stderr=true

[program:celery-reports]
command={{ fieldlog_venv }}/bin/celery -A fieldlog worker -Q reports -n reports@%%h --concurrency={{ \
q.reports }} --max-tasks-per-child=40
directory={{ fieldlog_current }}/backend
user={{ deploy_user }}
autorestart=true
stopasgroup=true
killasgroup=true
stopwaitsecs=930
stdout_logfile=/var/log/fieldlog/celery-reports.log
redirect_stderr=true

[program:celery-beat]
command={{ fieldlog_venv }}/bin/celery -A fieldlog beat --pidfile= -s /var/lib/fieldlog/celerybeat-schedule
directory={{ fieldlog_current }}/backend
user={{ deploy_user }}
autorestart=true
stopwaitsecs=20
stdout_logfile=/var/log/fieldlog/celery-beat.log
redirect_stderr=true
""",
    ),
    "930",
    "In the supervisor-celery.conf.j2 template, what stopwaitsecs does the reports worker get?",
    "During a deploy, how long does the process manager wait for the PDF-rendering background worker to "
    "finish before killing it?",
    "report worker shutdown grace?",
)

_plant(
    read_scene(
        "deploy/ansible/roles/nginx/templates/fieldlog.conf.j2",
        """\
# {{ ansible_managed }}
upstream fieldlog_web {
    server 127.0.0.1:8000 fail_timeout=0;
    keepalive 32;
}

limit_req_zone $binary_remote_addr zone=api_per_ip:10m rate=12r/s;
limit_req_zone $http_x_device_id zone=sync_per_device:10m rate=2r/s;

server {
    listen 443 ssl http2;
    server_name {{ fieldlog_domain }};

    ssl_certificate     /etc/letsencrypt/live/{{ fieldlog_domain }}/fullchain.pem;
    ssl_certificate_key /etc/letsencrypt/live/{{ fieldlog_domain }}/privkey.pem;

    client_max_body_size 8m;
    proxy_read_timeout 75s;
    proxy_set_header Host $host;
    proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
    proxy_set_header X-Forwarded-Proto https;

    location /static/ {
        alias {{ fieldlog_current }}/backend/staticfiles/;
        expires 30d;
    }

    location ~ ^/api/v2/(jobs|visits)/[^/]+/attachments {
        client_max_body_size 48m;
        proxy_request_buffering off;
        proxy_read_timeout 180s;
        proxy_pass http://fieldlog_web;
    }

    location /api/v2/sync/ {
        limit_req zone=sync_per_device burst=10 nodelay;
        client_max_body_size 16m;
        proxy_pass http://fieldlog_web;
    }

    location /api/ {
        limit_req zone=api_per_ip burst=40 nodelay;
        proxy_pass http://fieldlog_web;
    }

    location /admin/ {
        allow 10.20.0.0/16;
        deny all;
        client_max_body_size 20m;
        proxy_pass http://fieldlog_web;
    }

    location / {
        proxy_pass http://fieldlog_web;
    }
}
""",
    ),
    "48m",
    "In the nginx fieldlog.conf.j2 template, what client_max_body_size applies to attachment uploads?",
    "What's the biggest photo or file the reverse proxy lets the phone app upload to a work order?",
    "max attachment upload size?",
)

# --- source, build files and schemas -------------------------------------------------------------

_plant(
    read_scene(
        "android/app/build.gradle.kts",
        """\
plugins {
    alias(libs.plugins.android.application)
    alias(libs.plugins.kotlin.android)
    alias(libs.plugins.kotlin.kapt)
    alias(libs.plugins.hilt)
}

android {
    namespace = "com.fieldlog.tech"
    compileSdk = 34

    defaultConfig {
        applicationId = "com.fieldlog.tech"
        minSdk = 26
        targetSdk = 34
        versionCode = 3107
        versionName = "4.6.2"
        testInstrumentationRunner = "com.fieldlog.tech.HiltTestRunner"
        vectorDrawables.useSupportLibrary = true
    }

    signingConfigs {
        create("release") {
            storeFile = file(System.getenv("FIELDLOG_KEYSTORE") ?: "release.jks")
            storePassword = System.getenv("FIELDLOG_KEYSTORE_PASSWORD")
            keyAlias = "fieldlog-tech"
            keyPassword = System.getenv("FIELDLOG_KEY_PASSWORD")
        }
    }

    buildTypes {
        debug {
            applicationIdSuffix = ".debug"
            isMinifyEnabled = false
        }
        release {
            isMinifyEnabled = true
            isShrinkResources = true
            proguardFiles(getDefaultProguardFile("proguard-android-optimize.txt"), "proguard-rules.pro")
            signingConfig = signingConfigs.getByName("release")
        }
    }

    compileOptions {
        sourceCompatibility = JavaVersion.VERSION_17
        targetCompatibility = JavaVersion.VERSION_17
    }
    kotlinOptions {
        jvmTarget = "17"
    }
    buildFeatures {
        compose = true
        buildConfig = true
    }
    composeOptions {
        kotlinCompilerExtensionVersion = "1.5.14"
    }
}

apply(from = "flavors.gradle.kts")

dependencies {
    implementation(project(":core:data"))
    implementation(project(":core:network"))
    implementation(platform(libs.compose.bom))
    implementation(libs.bundles.compose)
    implementation(libs.hilt.android)
    kapt(libs.hilt.compiler)
    implementation(libs.work.runtime)
    testImplementation(libs.junit)
    testImplementation(libs.mockk)
}
""",
    ),
    "3107",
    "What versionCode is set in android/app/build.gradle.kts?",
    "What integer build number does the technicians' phone app report to the Play Store?",
    "app build number?",
)

_plant(
    read_scene(
        "ingest/internal/decode/frame.go",
        """\
// Package decode parses the binary frames sent by the vehicle trackers.
package decode

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"time"
)

const (
	frameMagic    = 0xF1D0
	frameVersion  = 3
	headerLen     = 17
	pointLen      = 22
	trailerLen    = 4
	maxFrameBytes = 8192
	maxPoints     = (maxFrameBytes - headerLen - trailerLen) / pointLen
)

var (
	ErrShort    = errors.New("decode: frame shorter than header")
	ErrMagic    = errors.New("decode: bad magic")
	ErrVersion  = errors.New("decode: unsupported frame version")
	ErrChecksum = errors.New("decode: checksum mismatch")
)

// Version 2 frames were summed with crc32.IEEE; the v3 firmware moved to the table below.
// (The Koopman polynomial was tried on the bench and dropped: the modem firmware lacks it.)
var crcTable = crc32.MakeTable(crc32.Castagnoli)

// Header is the fixed part in front of every frame.
type Header struct {
	DeviceID uint64
	Sent     time.Time
	Count    uint16
}

// Parse checks a frame's magic, version and checksum and returns its header and payload.
func Parse(b []byte) (Header, []byte, error) {
	if len(b) < headerLen+trailerLen {
		return Header{}, nil, ErrShort
	}
	if binary.BigEndian.Uint16(b[0:2]) != frameMagic {
		return Header{}, nil, ErrMagic
	}
	if b[2] != frameVersion {
		return Header{}, nil, ErrVersion
	}
	body, sum := b[:len(b)-trailerLen], binary.BigEndian.Uint32(b[len(b)-trailerLen:])
	if crc32.Checksum(body, crcTable) != sum {
		return Header{}, nil, ErrChecksum
	}
	h := Header{
		DeviceID: binary.BigEndian.Uint64(b[3:11]),
		Sent:     time.Unix(int64(binary.BigEndian.Uint32(b[11:15])), 0).UTC(),
		Count:    binary.BigEndian.Uint16(b[15:17]),
	}
	return h, body[headerLen:], nil
}
""",
    ),
    "Castagnoli",
    "In ingest/internal/decode/frame.go, which crc32 polynomial table is built for checksums?",
    "What checksum flavour validates each binary packet coming from the vehicle trackers?",
    "which crc do tracker frames use?",
)

_plant(
    read_scene(
        "android/app/src/main/java/com/fieldlog/tech/sync/SyncWorker.kt",
        """\
package com.fieldlog.tech.sync

import android.content.Context
import androidx.hilt.work.HiltWorker
import androidx.work.BackoffPolicy
import androidx.work.Constraints
import androidx.work.CoroutineWorker
import androidx.work.ExistingPeriodicWorkPolicy
import androidx.work.NetworkType
import androidx.work.PeriodicWorkRequestBuilder
import androidx.work.WorkManager
import androidx.work.WorkerParameters
import com.fieldlog.tech.data.outbox.OutboxRepository
import dagger.assisted.Assisted
import dagger.assisted.AssistedInject
import java.util.concurrent.TimeUnit

@HiltWorker
class SyncWorker @AssistedInject constructor(
    @Assisted context: Context,
    @Assisted params: WorkerParameters,
    private val outbox: OutboxRepository,
) : CoroutineWorker(context, params) {

    override suspend fun doWork(): Result {
        if (runAttemptCount >= MAX_ATTEMPTS) return Result.failure()
        val sent = outbox.flush(maxItems = MAX_BATCH, maxPhotos = MAX_PHOTOS_PER_RUN)
        return if (sent.failed == 0) Result.success() else Result.retry()
    }

    companion object {
        const val UNIQUE_NAME = "fieldlog-sync"
        private const val MAX_BATCH = 150
        private const val MAX_PHOTOS_PER_RUN = 12
        private const val MAX_ATTEMPTS = 8
        private const val SYNC_INTERVAL_MINUTES = 35L
        private const val FLEX_MINUTES = 10L
        private const val INITIAL_BACKOFF_SECONDS = 45L

        fun schedule(context: Context) {
            val constraints = Constraints.Builder()
                .setRequiredNetworkType(NetworkType.CONNECTED)
                .setRequiresBatteryNotLow(true)
                .build()
            val request = PeriodicWorkRequestBuilder<SyncWorker>(
                SYNC_INTERVAL_MINUTES, TimeUnit.MINUTES,
                FLEX_MINUTES, TimeUnit.MINUTES,
            )
                .setConstraints(constraints)
                .setBackoffCriteria(BackoffPolicy.EXPONENTIAL, INITIAL_BACKOFF_SECONDS, TimeUnit.SECONDS)
                .build()
            WorkManager.getInstance(context)
                .enqueueUniquePeriodicWork(UNIQUE_NAME, ExistingPeriodicWorkPolicy.UPDATE, request)
        }
    }
}
""",
    ),
    "35L",
    "In SyncWorker.kt, what is SYNC_INTERVAL_MINUTES?",
    "How often does the phone app push its offline queue of changes up to the server in the background?",
    "how often does the app sync?",
)

_plant(
    read_scene(
        "backend/fieldlog/jobs/models.py",
        """\
import uuid

from django.conf import settings
from django.contrib.gis.db import models as gis
from django.db import models

from fieldlog.jobs.references import next_job_reference


class Priority(models.TextChoices):
    P1 = "P1", "Emergency (4h)"
    P2 = "P2", "Urgent (8h)"
    P3 = "P3", "Routine (3 days)"
    P4 = "P4", "Planned"


class Status(models.TextChoices):
    NEW = "new"
    SCHEDULED = "scheduled"
    EN_ROUTE = "en_route"
    ON_SITE = "on_site"
    AWAITING_PARTS = "awaiting_parts"
    COMPLETED = "completed"
    CANCELLED = "cancelled"


class Job(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    reference = models.CharField(max_length=16, unique=True, default=next_job_reference)
    customer = models.ForeignKey("customers.Customer", on_delete=models.PROTECT, related_name="jobs")
    site = models.ForeignKey("customers.Site", on_delete=models.PROTECT, related_name="jobs")
    asset = models.ForeignKey("assets.Asset", on_delete=models.CASCADE, null=True, blank=True)
    assigned_technician = models.ForeignKey(
        "technicians.Technician", on_delete=models.SET_NULL, null=True, blank=True, related_name="jobs"
    )
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    priority = models.CharField(max_length=2, choices=Priority.choices, default=Priority.P3)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.NEW, db_index=True)
    summary = models.CharField(max_length=200)
    scheduled_start = models.DateTimeField(null=True, blank=True)
    sla_deadline = models.DateTimeField()
    location = gis.PointField(geography=True, null=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["status", "scheduled_start"])]

    def __str__(self) -> str:
        return f"{self.reference} {self.summary}"


class JobEvent(models.Model):
    job = models.ForeignKey(Job, on_delete=models.CASCADE, related_name="events")
    kind = models.CharField(max_length=32)
    payload = models.JSONField(default=dict)
    at = models.DateTimeField(auto_now_add=True, db_index=True)
""",
    ),
    "SET_NULL",
    "In backend/fieldlog/jobs/models.py, what on_delete does Job.assigned_technician use?",
    "If an engineer's record is removed, what happens to the work orders they had been given?",
    "what happens to jobs when a tech is deleted?",
)

_plant(
    read_scene(
        "ingest/migrations/000014_positions_partitioned.up.sql",
        """\
-- Positions become range-partitioned by month; the old table is kept for a week as positions_old.
BEGIN;

CREATE TABLE positions_new (
    device_id    bigint           NOT NULL,
    recorded_at  timestamptz      NOT NULL,
    received_at  timestamptz      NOT NULL DEFAULT now(),
    lat          double precision NOT NULL,
    lon          double precision NOT NULL,
    speed_kmh    real,
    heading_deg  smallint,
    hdop         real,
    satellites   smallint,
    ignition     boolean,
    odometer_m   bigint,
    geom         geography(Point, 4326)
        GENERATED ALWAYS AS (ST_SetSRID(ST_MakePoint(lon, lat), 4326)::geography) STORED
) PARTITION BY RANGE (recorded_at);

CREATE TABLE positions_2024_06 PARTITION OF positions_new FOR VALUES FROM ('2024-06-01') TO ('2024-07-01');
CREATE TABLE positions_2024_07 PARTITION OF positions_new FOR VALUES FROM ('2024-07-01') TO ('2024-08-01');
CREATE TABLE positions_2024_08 PARTITION OF positions_new FOR VALUES FROM ('2024-08-01') TO ('2024-09-01');
CREATE TABLE positions_default PARTITION OF positions_new DEFAULT;

CREATE UNIQUE INDEX positions_new_device_time_key ON positions_new USING btree (device_id, recorded_at);
CREATE INDEX positions_new_recorded_at_idx ON positions_new USING brin (recorded_at);
CREATE INDEX positions_new_geom_idx ON positions_new USING gist (geom);
CREATE INDEX positions_new_moving_idx ON positions_new USING btree (device_id) WHERE speed_kmh > 3;

INSERT INTO positions_new (device_id, recorded_at, received_at, lat, lon, speed_kmh, heading_deg,
                           hdop, satellites, ignition, odometer_m)
SELECT device_id, recorded_at, received_at, lat, lon, speed_kmh, heading_deg,
       hdop, satellites, ignition, odometer_m
FROM positions
WHERE recorded_at >= '2024-06-01';

ALTER TABLE positions RENAME TO positions_old;
ALTER TABLE positions_new RENAME TO positions;

COMMIT;
""",
    ),
    "brin",
    "In the 000014 positions migration, which index method is used on recorded_at?",
    "What kind of index did we put on the timestamp column of the GPS points table when we split it by "
    "month?",
    "index type on position timestamps?",
)

_plant(
    read_scene(
        ".github/workflows/ci.yml",
        """\
name: ci

on:
  pull_request:
  push:
    branches: [main]

concurrency:
  group: ci-${{ github.ref }}
  cancel-in-progress: true

jobs:
  backend:
    runs-on: ubuntu-22.04
    services:
      postgres:
        image: postgis/postgis:15-3.4
        env:
          POSTGRES_PASSWORD: postgres
        ports: ["5432:5432"]
      rabbitmq:
        image: rabbitmq:3.13-alpine
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-python@v5
        with:
          python-version: "3.11.9"
          cache: pip
      - run: pip install -r backend/requirements/test.txt
      - run: cd backend && pytest -q -n 4

  ingest:
    runs-on: ubuntu-22.04
    defaults:
      run:
        working-directory: ingest
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-go@v5
        with:
          go-version: "1.22.5"
          cache-dependency-path: ingest/go.sum
      - uses: golangci/golangci-lint-action@v6
        with:
          version: v1.59.1
          working-directory: ingest
      - run: go test -race ./...

  android:
    runs-on: ubuntu-22.04
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-java@v4
        with:
          distribution: temurin
          java-version: "17"
      - uses: gradle/actions/setup-gradle@v3
      - run: cd android && ./gradlew :app:testDebugUnitTest :app:lintDebug

  etl:
    runs-on: ubuntu-22.04
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-python@v5
        with:
          python-version: "3.12.4"
      - run: pip install -e "etl[test]" && pytest -q etl/tests
""",
    ),
    "1.22.5",
    "In .github/workflows/ci.yml, which Go version does the setup-go step pin?",
    "Which release of the Go toolchain does the build pipeline compile the telemetry service with?",
    "CI go version?",
)

_plant(
    read_scene(
        "etl/fieldlog_etl/costs.py",
        """\
\"\"\"Cost of each completed job: labour, overtime, travel and parts, in pounds.\"\"\"

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

import pandas as pd

LABOUR_RATE_PER_HOUR = Decimal("42.50")
OVERTIME_MULTIPLIER = Decimal("1.5")
WEEKEND_MULTIPLIER = Decimal("1.75")
TRAVEL_COST_PER_KM = Decimal("0.385")
VAN_DAY_RATE = Decimal("38.00")
CALL_OUT_FEE = Decimal("65.00")
PARTS_HANDLING = Decimal("0.08")
PENNY = Decimal("0.01")


def _money(value: Decimal) -> Decimal:
    return value.quantize(PENNY, rounding=ROUND_HALF_UP)


def labour_cost(minutes: int, overtime_minutes: int, weekend: bool) -> Decimal:
    base = LABOUR_RATE_PER_HOUR * Decimal(minutes) / 60
    extra = LABOUR_RATE_PER_HOUR * OVERTIME_MULTIPLIER * Decimal(overtime_minutes) / 60
    total = base + extra
    return _money(total * WEEKEND_MULTIPLIER if weekend else total)


def travel_cost(distance_km: float) -> Decimal:
    return _money(TRAVEL_COST_PER_KM * Decimal(str(distance_km)))


def parts_cost(net: Decimal) -> Decimal:
    return _money(net * (1 + PARTS_HANDLING))


def job_costs(visits: pd.DataFrame) -> pd.DataFrame:
    \"\"\"One row per job with its cost split; visits must be completed ones only.\"\"\"
    out = visits.copy()
    out["labour"] = [
        labour_cost(m, o, w)
        for m, o, w in zip(out["labour_minutes"], out["overtime_minutes"], out["is_weekend"], strict=True)
    ]
    out["travel"] = out["distance_km"].map(travel_cost)
    out["parts"] = out["parts_net"].map(parts_cost)
    out["call_out"] = out["is_call_out"].map(lambda c: CALL_OUT_FEE if c else Decimal(0))
    out["total"] = out["labour"] + out["travel"] + out["parts"] + out["call_out"]
    return out.groupby("job_id", as_index=False)[["labour", "travel", "parts", "call_out", "total"]].sum()
""",
    ),
    "0.385",
    "In etl/fieldlog_etl/costs.py, what per-kilometre travel cost is used?",
    "What mileage rate does the reporting pipeline charge for driving between customer sites?",
    "the mileage rate?",
)

_plant(
    read_scene(
        "android/gradle/libs.versions.toml",
        """\
[versions]
agp = "8.4.2"
kotlin = "1.9.24"
ksp = "1.9.24-1.0.20"
compose-bom = "2024.06.00"
activity-compose = "1.9.0"
navigation = "2.7.7"
lifecycle = "2.8.2"
hilt = "2.51.1"
hilt-work = "1.2.0"
room = "2.6.1"
work = "2.9.0"
datastore = "1.1.1"
retrofit = "2.11.0"
okhttp = "4.12.0"
moshi = "1.15.1"
coroutines = "1.8.1"
coil = "2.6.0"
maps-compose = "4.4.1"
play-services-location = "21.3.0"
timber = "5.0.1"
junit = "4.13.2"
mockk = "1.13.11"
turbine = "1.1.0"

[libraries]
compose-bom = { group = "androidx.compose", name = "compose-bom", version.ref = "compose-bom" }
hilt-android = { group = "com.google.dagger", name = "hilt-android", version.ref = "hilt" }
hilt-compiler = { group = "com.google.dagger", name = "hilt-android-compiler", version.ref = "hilt" }
room-runtime = { group = "androidx.room", name = "room-runtime", version.ref = "room" }
room-ktx = { group = "androidx.room", name = "room-ktx", version.ref = "room" }
room-compiler = { group = "androidx.room", name = "room-compiler", version.ref = "room" }
work-runtime = { group = "androidx.work", name = "work-runtime-ktx", version.ref = "work" }
retrofit = { group = "com.squareup.retrofit2", name = "retrofit", version.ref = "retrofit" }
okhttp-logging = { group = "com.squareup.okhttp3", name = "logging-interceptor", version.ref = "okhttp" }
junit = { group = "junit", name = "junit", version.ref = "junit" }
mockk = { group = "io.mockk", name = "mockk", version.ref = "mockk" }

[plugins]
android-application = { id = "com.android.application", version.ref = "agp" }
kotlin-android = { id = "org.jetbrains.kotlin.android", version.ref = "kotlin" }
kotlin-kapt = { id = "org.jetbrains.kotlin.kapt", version.ref = "kotlin" }
hilt = { id = "com.google.dagger.hilt.android", version.ref = "hilt" }
""",
    ),
    "2.6.1",
    "In android/gradle/libs.versions.toml, what version is room pinned to?",
    "Which version of the Jetpack on-device SQL persistence library does the phone app use?",
    "app's local database library version?",
)

_plant(
    read_scene(
        "ingest/go.mod",
        """\
module github.com/fieldlog/ingest

go 1.22.0

toolchain go1.22.4

require (
	github.com/BurntSushi/toml v1.4.0
	github.com/jackc/pgx/v5 v5.6.0
	github.com/nats-io/nats.go v1.36.0
	github.com/prometheus/client_golang v1.19.1
	github.com/rs/zerolog v1.33.0
	github.com/stretchr/testify v1.9.0
	golang.org/x/sync v0.7.0
)

require (
	github.com/beorn7/perks v1.0.1 // indirect
	github.com/cespare/xxhash/v2 v2.2.0 // indirect
	github.com/davecgh/go-spew v1.1.1 // indirect
	github.com/jackc/pgpassfile v1.0.0 // indirect
	github.com/jackc/pgservicefile v0.0.0-20231201235250-de7065d80cb9 // indirect
	github.com/jackc/puddle/v2 v2.2.1 // indirect
	github.com/klauspost/compress v1.17.8 // indirect
	github.com/mattn/go-colorable v0.1.13 // indirect
	github.com/mattn/go-isatty v0.0.20 // indirect
	github.com/nats-io/nkeys v0.4.7 // indirect
	github.com/nats-io/nuid v1.0.1 // indirect
	github.com/pmezard/go-difflib v1.0.0 // indirect
	github.com/prometheus/client_model v0.6.1 // indirect
	github.com/prometheus/common v0.54.0 // indirect
	github.com/prometheus/procfs v0.15.1 // indirect
	golang.org/x/crypto v0.24.0 // indirect
	golang.org/x/sys v0.21.0 // indirect
	golang.org/x/text v0.16.0 // indirect
	google.golang.org/protobuf v1.34.2 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
)
""",
    ),
    "v5.6.0",
    "In ingest/go.mod, which version of jackc/pgx is required?",
    "What version of the Postgres driver library does the Go telemetry service depend on?",
    "ingester db driver version?",
)

# --- tests and builds ----------------------------------------------------------------------------

_plant(
    bash_scene(
        "cd backend && pytest -q fieldlog/jobs/tests",
        """\
============================= test session starts ==============================
platform linux -- Python 3.11.9, pytest-8.2.2, pluggy-1.5.0
django: version: 4.2.14, settings: fieldlog.settings.test (from ini)
rootdir: /home/dev/fieldlog/backend
configfile: pytest.ini
plugins: django-4.8.0, xdist-3.6.1, cov-5.0.0, freezegun-0.4.2
collected 57 items

fieldlog/jobs/tests/test_models.py ..........                            [ 17%]
fieldlog/jobs/tests/test_reschedule.py .......F..                        [ 35%]
fieldlog/jobs/tests/test_serializers.py ............                     [ 56%]
fieldlog/jobs/tests/test_sla.py .........                                [ 71%]
fieldlog/jobs/tests/test_views.py ................                       [100%]

=================================== FAILURES ===================================
_________________ test_reschedule_keeps_original_sla_deadline __________________

job_factory = <function job_factory.<locals>._make at 0x7f3a1c2e9d30>
api_client = <rest_framework.test.APIClient object at 0x7f3a1c30b6d0>

    @freeze_time("2024-06-12 09:00")
    def test_reschedule_keeps_original_sla_deadline(job_factory, api_client):
        job = job_factory(priority="P2")
        original = job.sla_deadline
        resp = api_client.post(f"/api/v2/jobs/{job.pk}/reschedule/", {"start": "2024-06-14T13:00:00Z"})
        assert resp.status_code == 200
        job.refresh_from_db()
>       assert job.sla_deadline == original
E       AssertionError: assert datetime.datetime(2024, 6, 14, 21, 0, tzinfo=datetime.timezone.utc) \
== datetime.datetime(2024, 6, 12, 17, 0, tzinfo=datetime.timezone.utc)
E        +  where datetime.datetime(2024, 6, 14, 21, 0, tzinfo=datetime.timezone.utc) = <Job: \
FL-24-01873 Boiler pressure drop>.sla_deadline

fieldlog/jobs/tests/test_reschedule.py:48: AssertionError
=========================== short test summary info ============================
FAILED fieldlog/jobs/tests/test_reschedule.py::test_reschedule_keeps_original_sla_deadline - Assertion...
========================= 1 failed, 56 passed in 6.84s =========================
""",
        1,
    ),
    "test_reschedule_keeps_original_sla_deadline",
    "Which test failed in the pytest run of the jobs app?",
    "Which Django test case for work orders went red in that last backend run?",
    "the failing backend test?",
)

_plant(
    bash_scene(
        "cd ingest && go test -race ./...",
        """\
?   \tgithub.com/fieldlog/ingest/cmd/ingest\t[no test files]
?   \tgithub.com/fieldlog/ingest/cmd/replay\t[no test files]
ok  \tgithub.com/fieldlog/ingest/internal/auth\t0.044s
ok  \tgithub.com/fieldlog/ingest/internal/batch\t0.214s
ok  \tgithub.com/fieldlog/ingest/internal/clock\t0.011s
ok  \tgithub.com/fieldlog/ingest/internal/config\t0.019s
ok  \tgithub.com/fieldlog/ingest/internal/decode\t0.033s
--- FAIL: TestWindowDropsDuplicates (0.00s)
    --- PASS: TestWindowDropsDuplicates/exact_repeat (0.00s)
    --- PASS: TestWindowDropsDuplicates/same_time_other_device (0.00s)
    --- FAIL: TestWindowDropsDuplicates/same_fix_after_restart (0.00s)
        window_test.go:58: got 14 unique fixes, want 13
    --- PASS: TestWindowDropsDuplicates/outside_window (0.00s)
FAIL
FAIL\tgithub.com/fieldlog/ingest/internal/dedupe\t0.027s
ok  \tgithub.com/fieldlog/ingest/internal/geo\t0.012s
ok  \tgithub.com/fieldlog/ingest/internal/health\t0.009s
ok  \tgithub.com/fieldlog/ingest/internal/httpapi\t0.188s
ok  \tgithub.com/fieldlog/ingest/internal/metrics\t0.016s
ok  \tgithub.com/fieldlog/ingest/internal/natsout\t0.302s
ok  \tgithub.com/fieldlog/ingest/internal/ratelimit\t1.021s
ok  \tgithub.com/fieldlog/ingest/internal/store\t1.904s
?   \tgithub.com/fieldlog/ingest/internal/testutil\t[no test files]
FAIL
""",
        1,
    ),
    "same_fix_after_restart",
    "In the go test -race run, which subtest of TestWindowDropsDuplicates failed?",
    "In the Go telemetry service's suite, which duplicate-filtering case broke?",
    "which go subtest failed?",
)

_plant(
    bash_scene(
        "cd android && ./gradlew :app:testDebugUnitTest",
        """\
> Task :app:preBuild UP-TO-DATE
> Task :app:preDebugBuild UP-TO-DATE
> Task :core:data:compileDebugKotlin UP-TO-DATE
> Task :core:network:compileDebugKotlin UP-TO-DATE
> Task :app:generateDebugBuildConfig UP-TO-DATE
> Task :app:kaptGenerateStubsDebugKotlin UP-TO-DATE
> Task :app:kaptDebugKotlin UP-TO-DATE
> Task :app:compileDebugKotlin UP-TO-DATE
> Task :app:hiltJavaCompileDebug UP-TO-DATE
> Task :app:compileDebugUnitTestKotlin
> Task :app:testDebugUnitTest

JobDetailViewModelTest > completing without a signature shows an error FAILED
    java.lang.AssertionError at JobDetailViewModelTest.kt:112

JobListViewModelTest > filters by status PASSED
JobListViewModelTest > pull to refresh reloads from the repository PASSED
OutboxRepositoryTest > photos are sent after the visit they belong to PASSED
TimesheetCalculatorTest > break over midnight is split across days PASSED

46 tests completed, 1 failed

> Task :app:testDebugUnitTest FAILED

FAILURE: Build failed with an exception.

* What went wrong:
Execution failed for task ':app:testDebugUnitTest'.
> There were failing tests. See the report at: \
file:///home/dev/fieldlog/android/app/build/reports/tests/testDebugUnitTest/index.html

* Try:
> Run with --scan to get full insights.

BUILD FAILED in 38s
27 actionable tasks: 2 executed, 25 up-to-date
""",
        1,
    ),
    "completing without a signature shows an error",
    "Which test failed in the gradle testDebugUnitTest run?",
    "Which JVM unit test of the technicians' phone app broke?",
    "which app test failed?",
)

_plant(
    bash_scene(
        "cd android && ./gradlew :app:assembleRelease",
        """\
> Task :app:preBuild UP-TO-DATE
> Task :app:preReleaseBuild UP-TO-DATE
> Task :app:generateReleaseBuildConfig
> Task :app:kaptGenerateStubsReleaseKotlin
> Task :app:kaptReleaseKotlin
> Task :app:compileReleaseKotlin
w: file:///home/dev/fieldlog/android/app/src/main/java/com/fieldlog/tech/map/MapScreen.kt:77:17 \
'com.google.android.gms.maps.model.BitmapDescriptorFactory' is deprecated.
w: file:///home/dev/fieldlog/android/app/src/main/java/com/fieldlog/tech/camera/PhotoCapture.kt:41:9 \
'android.hardware.Camera' is deprecated.
> Task :app:hiltJavaCompileRelease
> Task :app:mergeReleaseResources
> Task :app:processReleaseManifest
> Task :app:dexBuilderRelease
> Task :app:mergeReleaseJavaResource
> Task :app:minifyReleaseWithR8 FAILED
ERROR: Missing classes detected while running R8. Please add the missing classes or apply additional keep \
rules that are generated in /home/dev/fieldlog/android/app/build/outputs/mapping/release/missing_rules.txt.
ERROR: R8: Missing class org.slf4j.impl.StaticLoggerBinder (referenced from: void \
org.slf4j.LoggerFactory.bind() and 3 other contexts)

FAILURE: Build failed with an exception.

* What went wrong:
Execution failed for task ':app:minifyReleaseWithR8'.
> A failure occurred while executing com.android.build.gradle.internal.tasks.R8Task$R8Runnable
   > Compilation failed to complete

* Try:
> Run with --stacktrace option to get the stack trace.
> Run with --info or --debug option to get more log output.

BUILD FAILED in 1m 52s
61 actionable tasks: 19 executed, 42 up-to-date
""",
        1,
    ),
    "org.slf4j.impl.StaticLoggerBinder",
    "When gradle assembleRelease failed, which class did R8 say was missing?",
    "The release build of the phone app broke at the code-shrinking step: which class couldn't it find?",
    "what broke the release build?",
)

_plant(
    bash_scene(
        "docker build -t fieldlog/ingest:dev ingest",
        """\
#0 building with "default" instance using docker driver

#1 [internal] load build definition from Dockerfile
#1 transferring dockerfile: 612B done
#1 DONE 0.0s

#2 [internal] load metadata for gcr.io/distroless/static-debian12:nonroot
#2 DONE 0.8s

#3 [internal] load metadata for docker.io/library/golang:1.22-bookworm
#3 DONE 0.9s

#4 [internal] load .dockerignore
#4 transferring context: 94B done
#4 DONE 0.0s

#5 [build 1/6] FROM docker.io/library/golang:1.22-bookworm@sha256:5c56ba0b2e4e7b28a1ac1e0e1a4c2d0f
#5 DONE 0.0s

#6 [build 4/6] RUN go mod download
#6 CACHED

#7 [build 5/6] COPY . .
#7 DONE 0.2s

#8 [build 6/6] RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/ingest ./cmd/ingest
#8 14.12 # github.com/fieldlog/ingest/internal/store
#8 14.12 internal/store/positions.go:88:31: cannot use rows (variable of type []Position) as \
pgx.CopyFromSource value in argument to tx.CopyFrom: []Position does not implement pgx.CopyFromSource \
(missing method Err)
#8 ERROR: process "/bin/sh -c CGO_ENABLED=0 go build -trimpath -ldflags=\\"-s -w\\" -o /out/ingest \
./cmd/ingest" did not complete successfully: exit code: 1
------
Dockerfile:14
--------------------
  12 |     COPY . .
  13 |
  14 | >>> RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/ingest ./cmd/ingest
  15 |
  16 |     FROM gcr.io/distroless/static-debian12:nonroot
--------------------
ERROR: failed to solve: process "/bin/sh -c CGO_ENABLED=0 go build -trimpath -ldflags=\\"-s -w\\" -o \
/out/ingest ./cmd/ingest" did not complete successfully: exit code: 1
""",
        1,
    ),
    "internal/store/positions.go:88",
    "When docker build of the ingest image failed, at which file and line did the Go compiler stop?",
    "The container build for the telemetry service broke while compiling: where in the source was the "
    "type error?",
    "where did the ingest image build break?",
)

_plant(
    bash_scene(
        "cd ingest && go test -run '^$' -bench . -benchmem ./internal/decode ./internal/dedupe",
        """\
goos: linux
goarch: amd64
pkg: github.com/fieldlog/ingest/internal/decode
cpu: AMD Ryzen 7 PRO 5850U with Radeon Graphics
BenchmarkParse-16                  \t 9123456\t       131.4 ns/op\t       0 B/op\t       0 allocs/op
BenchmarkDecodePoints/1-16         \t 6480211\t       186.9 ns/op\t      48 B/op\t       1 allocs/op
BenchmarkDecodePoints/32-16        \t  601554\t      1987 ns/op\t    1536 B/op\t       1 allocs/op
BenchmarkDecodePoints/256-16       \t   78120\t     15240 ns/op\t   12288 B/op\t       1 allocs/op
BenchmarkDecodeFrame-16            \t 2877391\t       412.7 ns/op\t     384 B/op\t       2 allocs/op
BenchmarkDecodeFrameV2-16          \t 2104877\t       569.3 ns/op\t     416 B/op\t       3 allocs/op
PASS
ok  \tgithub.com/fieldlog/ingest/internal/decode\t9.114s
goos: linux
goarch: amd64
pkg: github.com/fieldlog/ingest/internal/dedupe
cpu: AMD Ryzen 7 PRO 5850U with Radeon Graphics
BenchmarkWindowSeen/hit-16         \t22310845\t        53.61 ns/op\t       0 B/op\t       0 allocs/op
BenchmarkWindowSeen/miss-16        \t 8876101\t       134.8 ns/op\t      64 B/op\t       1 allocs/op
BenchmarkWindowEvict-16            \t  352914\t      3391 ns/op\t       0 B/op\t       0 allocs/op
PASS
ok  \tgithub.com/fieldlog/ingest/internal/dedupe\t6.027s
""",
    ),
    "412.7",
    "In the decode benchmark output, how many ns/op did BenchmarkDecodeFrame take?",
    "How long does the Go service take to decode one whole current-version tracker packet?",
    "frame decode speed?",
)

# --- databases, queues and deploys ---------------------------------------------------------------

_plant(
    bash_scene(
        'psql service=fieldlog-prod -c "SELECT relname, n_live_tup, n_dead_tup, last_autovacuum '
        'FROM pg_stat_user_tables ORDER BY n_dead_tup DESC LIMIT 18"',
        """\
              relname               | n_live_tup | n_dead_tup |        last_autovacuum
------------------------------------+------------+------------+-------------------------------
 django_celery_results_taskresult   |    4118230 |    2210563 | 2024-06-17 23:41:08.21+01
 jobs_jobevent                      |   12874417 |    1843207 | 2024-06-11 04:12:55.87+01
 notifications_message              |    3377120 |     912044 | 2024-06-18 01:05:31.44+01
 dispatch_slotproposal              |     804519 |     388190 | 2024-06-18 02:47:19.03+01
 django_session                     |     221880 |     164322 | 2024-06-17 22:13:40.9+01
 jobs_job                           |     611302 |      97451 | 2024-06-18 03:30:02.15+01
 technicians_shift                  |     146997 |      41208 | 2024-06-17 19:58:11.62+01
 invoices_invoiceline               |     958213 |      30977 | 2024-06-16 21:20:47.08+01
 assets_asset                       |     287004 |      18760 | 2024-06-15 10:02:13.5+01
 invoices_invoice                   |     402118 |      12093 | 2024-06-16 21:21:30.77+01
 customers_site                     |     166430 |       7751 | 2024-06-12 14:48:09.31+01
 django_celery_beat_periodictask    |         31 |       4402 | 2024-06-18 03:59:58.02+01
 customers_customer                 |      58221 |       2019 | 2024-06-09 08:16:27.4+01
 technicians_technician             |       1184 |        733 | 2024-06-14 12:00:41.19+01
 auth_user                          |       2310 |        512 | 2024-06-13 09:31:55.66+01
 dispatch_region                    |         42 |         96 |
 jobs_jobtemplate                   |        388 |         27 | 2024-05-30 16:42:10.02+01
 django_migrations                  |        214 |          3 |
(18 rows)
""",
    ),
    "1843207",
    "In the pg_stat_user_tables query, how many dead tuples did jobs_jobevent have?",
    "How many rows waiting for vacuum had piled up in the work-order history table?",
    "dead rows on the job events table?",
)

_plant(
    bash_scene(
        "docker compose ps -a",
        """\
NAME                              IMAGE                          SERVICE                 STATUS         \
         PORTS
fieldlog-beat-1                   fieldlog/backend:dev           beat                    Up 3 hours
fieldlog-db-1                     postgis/postgis:15-3.4         db                      Up 3 hours \
(healthy)    0.0.0.0:5433->5432/tcp
fieldlog-db-test-1                postgis/postgis:15-3.4         db-test                 Up 3 hours     \
         0.0.0.0:5434->5432/tcp
fieldlog-etl-scheduler-1          fieldlog/etl:dev               etl-scheduler           Up 3 hours
fieldlog-flower-1                 mher/flower:2.0                flower                  Up 3 hours     \
         0.0.0.0:5555->5555/tcp
fieldlog-grafana-1                grafana/grafana:11.0.0         grafana                 Up 3 hours     \
         0.0.0.0:3001->3000/tcp
fieldlog-ingest-1                 fieldlog/ingest:dev            ingest                  Up 40 minutes  \
         0.0.0.0:9700->9700/tcp
fieldlog-mailpit-1                axllent/mailpit:v1.18          mailpit                 Up 3 hours     \
         0.0.0.0:1025->1025/tcp, 0.0.0.0:8025->8025/tcp
fieldlog-minio-1                  minio/minio:RELEASE.2024-06-13 minio                   Up 3 hours     \
         0.0.0.0:9000-9001->9000-9001/tcp
fieldlog-minio-init-1             minio/mc:latest                minio-init              Exited (0) 3 \
hours ago
fieldlog-nats-1                   nats:2.10-alpine               nats                    Up 3 hours     \
         0.0.0.0:4222->4222/tcp, 0.0.0.0:8222->8222/tcp
fieldlog-nominatim-1              mediagis/nominatim:4.4         nominatim               Up 3 hours     \
         0.0.0.0:8088->8080/tcp
fieldlog-otel-collector-1         otel/opentelemetry-collector   otel-collector          Up 3 hours     \
         0.0.0.0:4317-4318->4317-4318/tcp
fieldlog-prometheus-1             prom/prometheus:v2.52.0        prometheus              Up 3 hours     \
         0.0.0.0:9091->9090/tcp
fieldlog-rabbitmq-1               rabbitmq:3.13-management       rabbitmq                Up 3 hours \
(healthy)    0.0.0.0:5673->5672/tcp, 0.0.0.0:15680->15672/tcp
fieldlog-redis-1                  redis:7.2-alpine               redis                   Up 3 hours     \
         0.0.0.0:6380->6379/tcp
fieldlog-web-1                    fieldlog/backend:dev           web                     Up 3 hours     \
         0.0.0.0:8000->8000/tcp
fieldlog-worker-default-1         fieldlog/backend:dev           worker-default          Up 3 hours
fieldlog-worker-notifications-1   fieldlog/backend:dev           worker-notifications    Up 3 hours
fieldlog-worker-reports-1         fieldlog/backend:dev           worker-reports          Restarting (1) \
9 seconds ago
""",
    ),
    "15680",
    "In docker compose ps, which host port is mapped to RabbitMQ's management UI?",
    "On my laptop, which port do I open in the browser to get the message broker's admin dashboard?",
    "broker dashboard port?",
)

_plant(
    bash_scene(
        "cd deploy/ansible && ansible-playbook -i inventories/production site.yml --limit workers "
        "--check --diff",
        """\

PLAY [Celery workers] **********************************************************

TASK [Gathering Facts] *********************************************************
ok: [worker-01.dc2.fieldlog.internal]
ok: [worker-02.dc2.fieldlog.internal]
ok: [worker-03.dc2.fieldlog.internal]
fatal: [worker-04.dc2.fieldlog.internal]: UNREACHABLE! => {"changed": false, "msg": "Failed to connect to \
the host via ssh: ssh: connect to host worker-04.dc2.fieldlog.internal port 22: No route to host", \
"unreachable": true}
ok: [worker-05.dc3.fieldlog.internal]

TASK [common : Ensure the deploy user exists] **********************************
ok: [worker-01.dc2.fieldlog.internal]
ok: [worker-02.dc2.fieldlog.internal]
ok: [worker-03.dc2.fieldlog.internal]
ok: [worker-05.dc3.fieldlog.internal]

TASK [celery : Render the supervisor programs] *********************************
--- before: /etc/supervisor/conf.d/celery.conf
+++ after: /home/dev/.ansible/tmp/ansible-local-81422/tmpq3v9xk1d/supervisor-celery.conf.j2
@@ -31,7 +31,7 @@
-command=/srv/fieldlog/venv/bin/celery -A fieldlog worker -Q dispatch -n dispatch@%h --concurrency=2
+command=/srv/fieldlog/venv/bin/celery -A fieldlog worker -Q dispatch -n dispatch@%h --concurrency=4

changed: [worker-01.dc2.fieldlog.internal]
changed: [worker-02.dc2.fieldlog.internal]
changed: [worker-03.dc2.fieldlog.internal]
changed: [worker-05.dc3.fieldlog.internal]

RUNNING HANDLER [celery : Reread supervisor] ***********************************
changed: [worker-01.dc2.fieldlog.internal]
changed: [worker-02.dc2.fieldlog.internal]
changed: [worker-03.dc2.fieldlog.internal]
changed: [worker-05.dc3.fieldlog.internal]

PLAY RECAP *********************************************************************
worker-01.dc2.fieldlog.internal : ok=14   changed=2    unreachable=0    failed=0    skipped=3    \
rescued=0    ignored=0
worker-02.dc2.fieldlog.internal : ok=14   changed=2    unreachable=0    failed=0    skipped=3    \
rescued=0    ignored=0
worker-03.dc2.fieldlog.internal : ok=14   changed=2    unreachable=0    failed=0    skipped=3    \
rescued=0    ignored=0
worker-04.dc2.fieldlog.internal : ok=0    changed=0    unreachable=1    failed=0    skipped=0    \
rescued=0    ignored=0
worker-05.dc3.fieldlog.internal : ok=14   changed=2    unreachable=0    failed=0    skipped=3    \
rescued=0    ignored=0
""",
        4,
    ),
    "worker-04",
    "In the ansible-playbook check run against the production workers, which host was unreachable?",
    "When I dry-ran the server configuration against the live background-job machines, which box couldn't be "
    "reached over SSH?",
    "which server was down?",
)

_plant(
    bash_scene(
        "git log --oneline -24 -- backend/fieldlog/invoices",
        """\
e81d07b invoices: statement PDF uses the customer's billing address, not the site's
3f0a9c4 invoices: credit notes reference the original invoice number
b7c2e15 invoices: late-payment reminder after 14 days, then 28
9d41f6a invoices: store the PDF hash so re-renders are detectable
a4c91e2 invoices: round VAT per line instead of on the invoice total
60be3d8 invoices: parts lines show the van they came from
f2e9a71 invoices: callout fee as its own line
c58b4d0 invoices: admin filter by overdue
1a7e6f3 invoices: Xero export retries on 429
77d0c2b invoices: migrate amounts to integer pence
d3b98e4 invoices: zero-rated customers (charities) skip VAT
04f1ac9 invoices: group visits of one job onto one invoice
8c6e2d7 invoices: PDF footer shows company number
e5a3f18 invoices: tests for partial payments
2b90d4c invoices: mark paid from the bank feed webhook
9f7c1e0 invoices: numbering per legal entity
5e2a8b3 invoices: don't invoice cancelled visits
b04d6c9 invoices: Xero contact sync
6a1f9e2 invoices: render_job_sheet moves to the reports queue
c9e3b75 invoices: line descriptions from the job template
31d8a0f invoices: due date from the customer's payment terms
f6b2c48 invoices: first cut of the Invoice and InvoiceLine models
0e7d5a3 invoices: app skeleton
7ca14e9 backend: split settings into base/local/production/test
""",
    ),
    "a4c91e2",
    "In the git log for backend/fieldlog/invoices, which commit changed how VAT is rounded?",
    "What's the short hash of the change that made tax get rounded on each line of a bill rather than on the "
    "total?",
    "the vat rounding commit?",
)

_plant(
    bash_scene(
        "ssh mq-01.dc2.fieldlog.internal sudo rabbitmqctl list_queues -p fieldlog name messages_ready "
        "messages_unacknowledged consumers",
        """\
Timeout: 60.0 seconds ...
Listing queues for vhost fieldlog ...
name\tmessages_ready\tmessages_unacknowledged\tconsumers
default\t212\t8\t24
notifications\t38412\t4\t12
dispatch\t0\t0\t12
reports\t17\t2\t6
celery\t0\t0\t0
default@worker-01.dc2.fieldlog.internal.celery.pidbox\t0\t0\t1
default@worker-02.dc2.fieldlog.internal.celery.pidbox\t0\t0\t1
default@worker-03.dc2.fieldlog.internal.celery.pidbox\t0\t0\t1
notifications@worker-01.dc2.fieldlog.internal.celery.pidbox\t0\t0\t1
notifications@worker-02.dc2.fieldlog.internal.celery.pidbox\t0\t0\t1
notifications@worker-03.dc2.fieldlog.internal.celery.pidbox\t0\t0\t1
dispatch@worker-01.dc2.fieldlog.internal.celery.pidbox\t0\t0\t1
dispatch@worker-02.dc2.fieldlog.internal.celery.pidbox\t0\t0\t1
dispatch@worker-03.dc2.fieldlog.internal.celery.pidbox\t0\t0\t1
reports@worker-05.dc3.fieldlog.internal.celery.pidbox\t0\t0\t1
celeryev.2b7f0e41-93c5-4d1a-a8e0-5f6c1d29b7aa\t0\t0\t1
celeryev.8e1c44d2-07ab-4f39-9b61-c2d5a0e7f316\t0\t0\t1
dead_letter\t61\t0\t0
xero_sync\t3\t0\t2
""",
    ),
    "38412",
    "In rabbitmqctl list_queues, how many messages were ready in the notifications queue?",
    "How big was the backlog of unsent customer texts and emails sitting in the broker?",
    "notification backlog?",
)

_plant(
    bash_scene(
        "cd backend && python manage.py showmigrations jobs invoices",
        """\
jobs
 [X] 0001_initial
 [X] 0002_job_priority
 [X] 0003_jobevent
 [X] 0004_job_site
 [X] 0005_job_asset
 [X] 0006_status_awaiting_parts
 [X] 0007_job_reference_unique
 [X] 0008_jobtemplate
 [X] 0009_job_location_geography
 [X] 0010_jobevent_at_index
 [X] 0011_job_sla_deadline
 [X] 0012_backfill_sla_deadline
 [X] 0013_job_status_scheduled_idx
 [X] 0014_job_created_by
 [X] 0015_jobtemplate_checklist
 [X] 0016_job_customer_protect
 [X] 0017_visit
 [X] 0018_visit_travel_minutes
 [X] 0019_visit_signature_required
 [X] 0020_job_technician_nullable
 [ ] 0021_visit_photos_required
invoices
 [X] 0001_initial
 [X] 0002_invoiceline
 [X] 0003_invoice_due_date
 [X] 0004_invoice_number_per_entity
 [X] 0005_creditnote
 [X] 0006_amounts_in_pence
 [X] 0007_invoice_pdf_sha256
 [X] 0008_invoiceline_vat_per_line
 [X] 0009_invoice_overdue_index
""",
    ),
    "0021_visit_photos_required",
    "In showmigrations for jobs and invoices, which migration is not applied yet?",
    "Which schema change for work orders is still pending on my local database?",
    "unapplied migration?",
)

_plant(
    bash_scene(
        "cd deploy && ansible-galaxy collection list",
        """\

# /home/dev/.ansible/collections/ansible_collections
Collection           Version
-------------------- -------
ansible.posix        1.5.4
community.docker     3.10.4
community.postgresql 3.4.1
community.rabbitmq   1.3.0

# /home/dev/fieldlog/deploy/.venv/lib/python3.11/site-packages/ansible_collections
Collection                    Version
----------------------------- -------
amazon.aws                    7.6.0
ansible.netcommon             6.1.2
ansible.utils                 4.1.0
ansible.windows               2.3.0
cloud.common                  3.0.0
community.crypto              2.20.0
community.general             8.6.1
community.grafana             1.8.0
community.mysql               3.9.0
community.network             5.0.2
community.sops                1.6.7
community.zabbix              2.4.0
containers.podman             1.13.0
grafana.grafana               5.2.0
kubernetes.core               3.1.0
prometheus.prometheus         0.16.3
""",
    ),
    "3.4.1",
    "In ansible-galaxy collection list, which version of community.postgresql is installed?",
    "What version of the database-modules add-on does the deploy tooling have installed?",
    "postgres collection version?",
)

_plant(
    bash_scene(
        "docker compose logs --tail=24 worker-reports",
        """\
worker-reports-1  | [2024-06-18 02:10:02,114: INFO/MainProcess] Task \
fieldlog.invoices.tasks.render_job_sheet[0c5e1f7a-3a41-4b8e-9d02-77a1f4c2e6b3] received
worker-reports-1  | [2024-06-18 02:10:04,871: INFO/ForkPoolWorker-1] Task \
fieldlog.invoices.tasks.render_job_sheet[0c5e1f7a-3a41-4b8e-9d02-77a1f4c2e6b3] succeeded in 2.75s: None
worker-reports-1  | [2024-06-18 02:14:07,512: INFO/MainProcess] Task \
fieldlog.invoices.tasks.render_statement_pdf[9b2d7e10-6f0c-4a55-b1e8-2c4d93a0f6e7] received
worker-reports-1  | [2024-06-18 02:15:30,003: INFO/MainProcess] Task \
fieldlog.invoices.tasks.export_timesheets[41e8a2c9-d7b3-4f60-8a1e-0b9c5d6e2f74] received
worker-reports-1  | [2024-06-18 02:15:41,662: INFO/ForkPoolWorker-2] Task \
fieldlog.invoices.tasks.export_timesheets[41e8a2c9-d7b3-4f60-8a1e-0b9c5d6e2f74] succeeded in 11.65s: 1184
worker-reports-1  | [2024-06-18 02:34:07,519: WARNING/MainProcess] Soft time limit (1200s) exceeded for \
fieldlog.invoices.tasks.render_statement_pdf[9b2d7e10-6f0c-4a55-b1e8-2c4d93a0f6e7]
worker-reports-1  | [2024-06-18 02:34:07,530: ERROR/ForkPoolWorker-1] Task \
fieldlog.invoices.tasks.render_statement_pdf[9b2d7e10-6f0c-4a55-b1e8-2c4d93a0f6e7] raised unexpected: \
SoftTimeLimitExceeded()
worker-reports-1  | Traceback (most recent call last):
worker-reports-1  |   File "/app/fieldlog/invoices/pdf.py", line 96, in render
worker-reports-1  |     html.write_pdf(target, font_config=fonts)
worker-reports-1  | billiard.exceptions.SoftTimeLimitExceeded: SoftTimeLimitExceeded()
worker-reports-1  | [2024-06-18 02:35:00,008: INFO/MainProcess] Task \
fieldlog.invoices.tasks.generate_monthly_statements[e7a90c13-5b2f-4d84-a6c1-93f0b8d2e415] received
worker-reports-1  | [2024-06-18 02:35:01,227: INFO/ForkPoolWorker-2] Task \
fieldlog.invoices.tasks.generate_monthly_statements[e7a90c13-5b2f-4d84-a6c1-93f0b8d2e415] succeeded in \
1.21s: 212
worker-reports-1  | [2024-06-18 02:35:01,230: INFO/MainProcess] Task \
fieldlog.invoices.tasks.render_job_sheet[6d3f0b82-c1e4-4a97-8f25-1e7b0a9c3d58] received
worker-reports-1  | [2024-06-18 02:35:03,904: INFO/ForkPoolWorker-2] Task \
fieldlog.invoices.tasks.render_job_sheet[6d3f0b82-c1e4-4a97-8f25-1e7b0a9c3d58] succeeded in 2.67s: None
worker-reports-1  | [2024-06-18 02:40:12,771: INFO/MainProcess] Task \
fieldlog.invoices.tasks.sync_xero_contacts[3c8e5a1f-92d0-4b7e-b6a3-5f1e0c7d9a24] received
worker-reports-1  | [2024-06-18 02:40:14,093: INFO/ForkPoolWorker-2] Task \
fieldlog.invoices.tasks.sync_xero_contacts[3c8e5a1f-92d0-4b7e-b6a3-5f1e0c7d9a24] succeeded in 1.31s: 7
worker-reports-1  | [2024-06-18 02:41:55,418: INFO/MainProcess] Task \
fieldlog.invoices.tasks.render_statement_pdf[f0a7c3e9-2d18-4b6f-8e5a-c9b1d4072e63] received
worker-reports-1  | [2024-06-18 03:01:55,426: WARNING/MainProcess] Soft time limit (1200s) exceeded for \
fieldlog.invoices.tasks.render_statement_pdf[f0a7c3e9-2d18-4b6f-8e5a-c9b1d4072e63]
worker-reports-1  | [2024-06-18 03:01:55,433: ERROR/ForkPoolWorker-1] Task \
fieldlog.invoices.tasks.render_statement_pdf[f0a7c3e9-2d18-4b6f-8e5a-c9b1d4072e63] raised unexpected: \
SoftTimeLimitExceeded()
worker-reports-1  | [2024-06-18 03:02:00,004: INFO/MainProcess] Task \
fieldlog.invoices.tasks.render_job_sheet[a18e4d6c-7b09-4f23-9c5e-b2d0f83a16e7] received
worker-reports-1  | [2024-06-18 03:02:02,640: INFO/ForkPoolWorker-2] Task \
fieldlog.invoices.tasks.render_job_sheet[a18e4d6c-7b09-4f23-9c5e-b2d0f83a16e7] succeeded in 2.63s: None
""",
    ),
    "render_statement_pdf",
    "In the worker-reports logs, which Celery task hit the soft time limit?",
    "Which background job keeps getting stopped for running too long on the PDF worker?",
    "which task keeps timing out?",
)

_plant(
    bash_scene(
        "cd etl && python -m fieldlog_etl.run --job job_costs --date 2024-06-30",
        """\
2024-07-01 04:17:00,412 INFO fieldlog_etl.run job=job_costs date=2024-06-30 lookback_days=35
2024-07-01 04:17:00,418 INFO fieldlog_etl.source connecting to replica pg-main-03 (fetch_size=20000)
2024-07-01 04:17:06,902 INFO fieldlog_etl.source visits: 18233 rows
2024-07-01 04:17:07,115 INFO fieldlog_etl.source parts_used: 40917 rows
2024-07-01 04:17:07,340 INFO fieldlog_etl.transform columns: job_id, visit_id, technician_id, \
labour_minutes, overtime_minutes, is_weekend, travel_km, parts_net, is_call_out
2024-07-01 04:17:09,871 INFO fieldlog_etl.transform job_costs: 6120 jobs
2024-07-01 04:17:09,874 INFO fieldlog_etl.sinks writing s3://fieldlog-analytics/job_costs/dt=2024-06-30/
Traceback (most recent call last):
  File "<frozen runpy>", line 198, in _run_module_as_main
  File "<frozen runpy>", line 88, in _run_code
  File "/home/dev/fieldlog/etl/fieldlog_etl/run.py", line 112, in <module>
    main()
  File "/home/dev/fieldlog/etl/fieldlog_etl/run.py", line 104, in main
    sink.write(result, partition=args.date)
  File "/home/dev/fieldlog/etl/fieldlog_etl/sinks.py", line 41, in write
    table = pa.Table.from_pandas(df, schema=self.schema, preserve_index=False)
  File "pyarrow/table.pxi", line 3874, in pyarrow.lib.Table.from_pandas
  File "/home/dev/fieldlog/etl/.venv/lib/python3.12/site-packages/pyarrow/pandas_compat.py", line 611, \
in dataframe_to_arrays
    arrays = [convert_column(c, f)
  File "/home/dev/fieldlog/etl/.venv/lib/python3.12/site-packages/pyarrow/pandas_compat.py", line 598, \
in convert_column
    raise e
  File "/home/dev/fieldlog/etl/.venv/lib/python3.12/site-packages/pyarrow/pandas_compat.py", line 592, \
in convert_column
    result = pa.array(col, type=type_, from_pandas=True, safe=safe)
  File "pyarrow/array.pxi", line 339, in pyarrow.lib.array
  File "pyarrow/array.pxi", line 85, in pyarrow.lib._ndarray_to_array
  File "pyarrow/error.pxi", line 91, in pyarrow.lib.check_status
pyarrow.lib.ArrowInvalid: ("Could not convert 'n/a' with type str: tried to convert to double", \
'Conversion failed for column travel_km with type object')
""",
        1,
    ),
    "travel_km",
    "When the ETL run of job_costs for 2024-06-30 failed, which column couldn't be converted?",
    "The reporting extract crashed while writing parquet: which field had text mixed into its numbers?",
    "which column broke the etl?",
)

_plant(
    bash_scene(
        "cd backend && pip list --outdated",
        """\
Package                        Version    Latest     Type
------------------------------ ---------- ---------- -----
amqp                           5.2.0      5.3.1      wheel
boto3                          1.34.128   1.34.144   wheel
botocore                       1.34.128   1.34.144   wheel
celery                         5.3.6      5.4.0      wheel
certifi                        2024.6.2   2024.7.4   wheel
Django                         4.2.14     5.0.7      wheel
django-celery-beat             2.6.0      2.7.0      wheel
django-environ                 0.11.2     0.12.0     wheel
django-storages                1.14.3     1.14.4     wheel
djangorestframework            3.15.1     3.15.2     wheel
factory-boy                    3.3.0      3.3.1      wheel
Faker                          25.8.0     26.0.0     wheel
kombu                          5.3.4      5.3.7      wheel
psycopg                        3.1.19     3.2.1      wheel
psycopg-binary                 3.1.19     3.2.1      wheel
pytest                         8.2.2      8.3.1      wheel
pytest-django                  4.8.0      4.9.0      wheel
sentry-sdk                     2.5.1      2.10.0     wheel
twilio                         9.1.1      9.2.3      wheel
urllib3                        2.2.1      2.2.2      wheel
WeasyPrint                     62.2       62.3       wheel
""",
    ),
    "5.4.0",
    "In pip list --outdated for the backend, what's the latest celery version available?",
    "What's the newest release of the background task library we could upgrade the Django service to?",
    "newest task queue release?",
)

# --- grep ----------------------------------------------------------------------------------------

_plant(
    grep_scene(
        "@shared_task",
        "backend/fieldlog",
        """\
backend/fieldlog/assets/tasks.py:14:@shared_task
backend/fieldlog/assets/tasks.py:37:@shared_task(ignore_result=True)
backend/fieldlog/assets/tasks.py:58:@shared_task(bind=True, max_retries=2)
backend/fieldlog/customers/tasks.py:11:@shared_task(ignore_result=True)
backend/fieldlog/customers/tasks.py:29:@shared_task(autoretry_for=(GeocoderTimedOut,), retry_backoff=30)
backend/fieldlog/dispatch/tasks.py:22:@shared_task(bind=True, max_retries=3, default_retry_delay=30)
backend/fieldlog/dispatch/tasks.py:64:@shared_task(bind=True, acks_late=True)
backend/fieldlog/dispatch/tasks.py:103:@shared_task(expires=300)
backend/fieldlog/dispatch/tasks.py:131:@shared_task
backend/fieldlog/invoices/tasks.py:18:@shared_task(bind=True, soft_time_limit=1200)
backend/fieldlog/invoices/tasks.py:47:@shared_task(bind=True, max_retries=5, default_retry_delay=120)
backend/fieldlog/invoices/tasks.py:83:@shared_task(ignore_result=True)
backend/fieldlog/invoices/tasks.py:109:@shared_task(autoretry_for=(XeroRateLimited,), retry_backoff=True)
backend/fieldlog/jobs/tasks.py:16:@shared_task
backend/fieldlog/jobs/tasks.py:39:@shared_task(ignore_result=True)
backend/fieldlog/jobs/tasks.py:72:@shared_task(bind=True, max_retries=3)
backend/fieldlog/jobs/tasks.py:98:@shared_task(expires=120)
backend/fieldlog/notifications/tasks.py:19:@shared_task(bind=True, max_retries=6, retry_backoff=True)
backend/fieldlog/notifications/tasks.py:41:@shared_task(rate_limit="30/m", \
autoretry_for=(TwilioRestException,))
backend/fieldlog/notifications/tasks.py:67:@shared_task(bind=True, max_retries=4, retry_backoff=True)
backend/fieldlog/notifications/tasks.py:90:@shared_task(ignore_result=True)
backend/fieldlog/technicians/tasks.py:12:@shared_task
backend/fieldlog/technicians/tasks.py:33:@shared_task(ignore_result=True, expires=600)
""",
    ),
    "notifications/tasks.py:41",
    "In the @shared_task grep, where is the task that has a per-minute rate limit?",
    "Which background job definition is throttled so it can only run a fixed number of times a minute: "
    "file and line?",
    "where's the throttled task?",
)

_plant(
    grep_scene(
        "os.Getenv(",
        "ingest",
        """\
ingest/cmd/ingest/main.go:41:\tcfgPath := os.Getenv("INGEST_CONFIG")
ingest/cmd/ingest/main.go:49:\tif lvl := os.Getenv("INGEST_LOG_LEVEL"); lvl != "" {
ingest/cmd/ingest/main.go:57:\tdsn := os.Getenv("INGEST_DB_DSN")
ingest/cmd/ingest/main.go:63:\tnatsURL := os.Getenv("INGEST_NATS_URL")
ingest/cmd/ingest/main.go:71:\tif os.Getenv("INGEST_PPROF") == "1" {
ingest/cmd/replay/main.go:22:\tsrc := os.Getenv("REPLAY_SOURCE_DIR")
ingest/cmd/replay/main.go:23:\ttarget := os.Getenv("REPLAY_TARGET_URL")
ingest/cmd/replay/main.go:31:\tspeed := os.Getenv("REPLAY_SPEED")
ingest/internal/auth/tokens.go:18:\tsecret := os.Getenv("INGEST_DEVICE_TOKEN_SECRET")
ingest/internal/auth/tokens.go:44:\tif os.Getenv("INGEST_ALLOW_UNSIGNED") == "true" {
ingest/internal/config/config.go:88:\t\tif v := os.Getenv(envKey(section, key)); v != "" {
ingest/internal/config/config.go:112:\tif host := os.Getenv("HOSTNAME"); host != "" {
ingest/internal/health/health.go:27:\tversion := os.Getenv("INGEST_BUILD_SHA")
ingest/internal/metrics/metrics.go:19:\tinstance := os.Getenv("INGEST_INSTANCE")
ingest/internal/natsout/publisher.go:36:\tcreds := os.Getenv("INGEST_NATS_CREDS")
ingest/internal/natsout/publisher.go:52:\tif os.Getenv("INGEST_NATS_DRY_RUN") != "" {
ingest/internal/store/pool.go:24:\tappName := os.Getenv("INGEST_PG_APPLICATION_NAME")
ingest/internal/store/pool.go:31:\tif os.Getenv("INGEST_PG_STATEMENT_CACHE") == "off" {
ingest/internal/testutil/db.go:15:\tdsn := os.Getenv("INGEST_TEST_DSN")
ingest/internal/testutil/db.go:17:\t\tdsn = \
"postgres://ingest:ingest@localhost:5434/ingest_test?sslmode=disable"
ingest/internal/testutil/nats.go:12:\turl := os.Getenv("INGEST_TEST_NATS_URL")
""",
    ),
    "cmd/ingest/main.go:57",
    "In the os.Getenv grep over ingest, where is the database DSN read?",
    "Which file and line in the Go telemetry service take the Postgres connection string from the "
    "environment?",
    "where's the ingest db url read?",
)

_plant(
    grep_scene(
        "TODO|FIXME",
        "android/app/src/main",
        """\
android/app/src/main/java/com/fieldlog/tech/MainActivity.kt:48:        // TODO: deep links from SMS \
open the job
android/app/src/main/java/com/fieldlog/tech/api/AuthInterceptor.kt:31:    // TODO: move the device id \
into a header \
interceptor of its own
android/app/src/main/java/com/fieldlog/tech/api/AuthInterceptor.kt:63:        // FIXME: two 401s at \
once both \
refresh; the second refresh revokes the first token and logs the user out
android/app/src/main/java/com/fieldlog/tech/api/FieldlogApi.kt:19:    // TODO: paginate with the \
cursor, not offset
android/app/src/main/java/com/fieldlog/tech/camera/PhotoCapture.kt:41:    // TODO: CameraX instead of \
the old API
android/app/src/main/java/com/fieldlog/tech/camera/PhotoCapture.kt:88:        // FIXME: EXIF rotation \
is lost on \
some Samsungs
android/app/src/main/java/com/fieldlog/tech/data/outbox/OutboxDao.kt:27:    // TODO: index on created_at
android/app/src/main/java/com/fieldlog/tech/data/outbox/OutboxRepository.kt:54:        // TODO: drop \
items older \
than 30 days after asking the user
android/app/src/main/java/com/fieldlog/tech/data/outbox/OutboxRepository.kt:97:        // FIXME: a \
photo can be \
sent before its visit exists on the server
android/app/src/main/java/com/fieldlog/tech/jobs/JobDetailScreen.kt:132:    // TODO: skeleton while loading
android/app/src/main/java/com/fieldlog/tech/jobs/JobDetailViewModel.kt:76:        // TODO: confirm before \
completing without parts
android/app/src/main/java/com/fieldlog/tech/jobs/JobListScreen.kt:58:    // TODO: group by day
android/app/src/main/java/com/fieldlog/tech/location/TrackingService.kt:39:    // TODO: lower accuracy when \
the battery is below 20%
android/app/src/main/java/com/fieldlog/tech/location/TrackingService.kt:104:        // FIXME: the \
notification \
comes back after the shift is ended
android/app/src/main/java/com/fieldlog/tech/map/MapScreen.kt:77:    // TODO: cluster markers above 50 jobs
android/app/src/main/java/com/fieldlog/tech/signature/SignaturePad.kt:22:    // TODO: \
pressure-sensitive stroke \
width
android/app/src/main/java/com/fieldlog/tech/sync/SyncStatusBanner.kt:17:    // TODO: show how many items are \
waiting
android/app/src/main/java/com/fieldlog/tech/timesheet/TimesheetScreen.kt:91:    // TODO: weekly totals
android/app/src/main/java/com/fieldlog/tech/timesheet/TimesheetViewModel.kt:45:        // FIXME: daylight \
saving day shows 23 hours
android/app/src/main/res/values/strings.xml:112:    <!-- TODO: Welsh translation for the sign-off screen -->
android/app/src/main/res/xml/network_security_config.xml:9:    <!-- TODO: remove the 10.0.2.2 cleartext \
exception from release -->
""",
    ),
    "AuthInterceptor.kt:63",
    "In the TODO/FIXME grep of the Android app, where's the note about concurrent token refreshes?",
    "Where did someone warn that two simultaneous unauthorised responses can make the phone app log the "
    "technician out?",
    "where's the token refresh fixme?",
)

_plant(
    grep_scene(
        "_port:",
        "deploy/ansible/inventories",
        """\
deploy/ansible/inventories/dev/group_vars/all.yml:14:postgres_port: 5433
deploy/ansible/inventories/dev/group_vars/all.yml:19:rabbitmq_port: 5673
deploy/ansible/inventories/dev/group_vars/all.yml:20:rabbitmq_management_port: 15672
deploy/ansible/inventories/dev/group_vars/all.yml:23:redis_port: 6380
deploy/ansible/inventories/dev/group_vars/workers.yml:6:flower_port: 5555
deploy/ansible/inventories/production/group_vars/all.yml:15:postgres_port: 6432  # pgbouncer on each app host
deploy/ansible/inventories/production/group_vars/all.yml:19:rabbitmq_port: 5671
deploy/ansible/inventories/production/group_vars/all.yml:20:rabbitmq_management_port: 15671
deploy/ansible/inventories/production/group_vars/all.yml:23:redis_port: 6379
deploy/ansible/inventories/production/group_vars/ingest.yml:4:ingest_metrics_port: 9464
deploy/ansible/inventories/production/group_vars/ingest.yml:5:ingest_admin_port: 7390
deploy/ansible/inventories/production/group_vars/monitoring.yml:8:node_exporter_port: 9100
deploy/ansible/inventories/production/group_vars/monitoring.yml:9:postgres_exporter_port: 9187
deploy/ansible/inventories/production/group_vars/monitoring.yml:10:rabbitmq_exporter_port: 9419
deploy/ansible/inventories/production/group_vars/web.yml:7:gunicorn_port: 8000
deploy/ansible/inventories/production/group_vars/workers.yml:9:flower_port: 5581
deploy/ansible/inventories/production/host_vars/pg-main-01.dc3.fieldlog.internal.yml:3:ansible_port: 2222
deploy/ansible/inventories/staging/group_vars/all.yml:15:postgres_port: 6432
deploy/ansible/inventories/staging/group_vars/all.yml:19:rabbitmq_port: 5671
deploy/ansible/inventories/staging/group_vars/all.yml:20:rabbitmq_management_port: 15671
deploy/ansible/inventories/staging/group_vars/all.yml:23:redis_port: 6379
deploy/ansible/inventories/staging/group_vars/ingest.yml:4:ingest_metrics_port: 9464
deploy/ansible/inventories/staging/group_vars/web.yml:7:gunicorn_port: 8000
deploy/ansible/inventories/staging/group_vars/workers.yml:9:flower_port: 5560
""",
    ),
    "5581",
    "In the _port: grep over the ansible inventories, what is flower_port in production?",
    "On the live servers, which port serves the web dashboard for watching the background job workers?",
    "task monitor port in prod?",
)

_plant(
    grep_scene(
        "crontab(",
        "backend/fieldlog",
        """\
backend/fieldlog/celery.py:4:from celery.schedules import crontab
backend/fieldlog/celery.py:22:    "dispatch-optimise-tomorrow": {"task": \
"fieldlog.dispatch.tasks.optimise_day", \
"schedule": crontab(hour=18, minute=30)},
backend/fieldlog/celery.py:23:    "dispatch-rebalance": {"task": "fieldlog.dispatch.tasks.rebalance", \
"schedule": crontab(minute="*/15", hour="7-18")},
backend/fieldlog/celery.py:24:    "jobs-sla-breach-alerts": {"task": \
"fieldlog.jobs.tasks.send_sla_breach_alerts", \
"schedule": crontab(minute="*/7")},
backend/fieldlog/celery.py:25:    "jobs-close-stale": {"task": "fieldlog.jobs.tasks.close_stale_jobs", \
"schedule": crontab(hour=3, minute=5)},
backend/fieldlog/celery.py:26:    "jobs-reminders": {"task": "fieldlog.jobs.tasks.send_visit_reminders", \
"schedule": crontab(hour="8,17", minute=0)},
backend/fieldlog/celery.py:27:    "notifications-retry-failed": {"task": \
"fieldlog.notifications.tasks.retry_failed", \
"schedule": crontab(minute="*/10")},
backend/fieldlog/celery.py:28:    "notifications-purge": {"task": "fieldlog.notifications.tasks.purge_old", \
"schedule": crontab(hour=2, minute=40, day_of_week="sun")},
backend/fieldlog/celery.py:29:    "invoices-monthly-statements": {"task": \
"fieldlog.invoices.tasks.generate_monthly_statements", \
"schedule": crontab(day_of_month=1, hour=2, minute=35)},
backend/fieldlog/celery.py:30:    "invoices-overdue-reminders": {"task": \
"fieldlog.invoices.tasks.send_overdue_reminders", \
"schedule": crontab(hour=9, minute=15)},
backend/fieldlog/celery.py:31:    "invoices-xero-sync": {"task": \
"fieldlog.invoices.tasks.sync_xero_contacts", \
"schedule": crontab(minute=40)},
backend/fieldlog/celery.py:32:    "assets-service-due": {"task": "fieldlog.assets.tasks.flag_service_due", \
"schedule": crontab(hour=6, minute=0)},
backend/fieldlog/celery.py:33:    "technicians-close-shifts": {"task": \
"fieldlog.technicians.tasks.close_open_shifts", \
"schedule": crontab(hour=23, minute=55)},
backend/fieldlog/celery.py:34:    "results-cleanup": {"task": "celery.backend_cleanup", "schedule": \
crontab(hour=4, minute=0)},
backend/fieldlog/dispatch/tests/test_schedule.py:3:from celery.schedules import crontab
backend/fieldlog/dispatch/tests/test_schedule.py:12:    assert entry["schedule"] == crontab(minute="*/15", \
hour="7-18")
backend/fieldlog/jobs/migrations/0012_backfill_sla_deadline.py:31:    # crontab(minute=0) once the \
backfill is done
backend/fieldlog/jobs/tests/test_beat.py:5:from celery.schedules import crontab
backend/fieldlog/jobs/tests/test_beat.py:19:    assert isinstance(entry["schedule"], type(crontab()))
backend/fieldlog/notifications/tests/test_beat.py:4:from celery.schedules import crontab
backend/fieldlog/notifications/tests/test_beat.py:16:    assert entry["schedule"].minute == \
crontab(minute="*/10").minute
""",
    ),
    "*/7",
    "In the crontab( grep, how often does the SLA breach alert task run?",
    "How frequently does the periodic scheduler fire the job that warns dispatchers about overdue visits?",
    "how often do overdue alerts go out?",
)

_plant(
    grep_scene(
        "@(GET|POST|PUT|PATCH|DELETE)\\(",
        "android/app/src/main/java/com/fieldlog/tech/api",
        """\
android/app/src/main/java/com/fieldlog/tech/api/AuthApi.kt:14:    @POST("v2/auth/device")
android/app/src/main/java/com/fieldlog/tech/api/AuthApi.kt:18:    @POST("v2/auth/refresh")
android/app/src/main/java/com/fieldlog/tech/api/AuthApi.kt:22:    @DELETE("v2/auth/session")
android/app/src/main/java/com/fieldlog/tech/api/FieldlogApi.kt:21:    @GET("v2/jobs")
android/app/src/main/java/com/fieldlog/tech/api/FieldlogApi.kt:25:    @GET("v2/jobs/{jobId}")
android/app/src/main/java/com/fieldlog/tech/api/FieldlogApi.kt:29:    @PATCH("v2/jobs/{jobId}/status")
android/app/src/main/java/com/fieldlog/tech/api/FieldlogApi.kt:33:    @POST("v2/jobs/{jobId}/notes")
android/app/src/main/java/com/fieldlog/tech/api/FieldlogApi.kt:38:    @POST("v2/jobs/{jobId}/attachments")
android/app/src/main/java/com/fieldlog/tech/api/FieldlogApi.kt:43:    @GET("v2/visits/{visitId}")
android/app/src/main/java/com/fieldlog/tech/api/FieldlogApi.kt:47:    @POST("v2/visits/{visitId}/arrive")
android/app/src/main/java/com/fieldlog/tech/api/FieldlogApi.kt:51:    @POST("v2/visits/{visitId}/complete")
android/app/src/main/java/com/fieldlog/tech/api/FieldlogApi.kt:56:    @POST("v2/visits/{visitId}/signature")
android/app/src/main/java/com/fieldlog/tech/api/FieldlogApi.kt:61:    @POST("v2/visits/{visitId}/parts")
android/app/src/main/java/com/fieldlog/tech/api/FieldlogApi.kt:65:    \
@DELETE("v2/visits/{visitId}/parts/{lineId}")
android/app/src/main/java/com/fieldlog/tech/api/FieldlogApi.kt:69:    @GET("v2/assets/{assetId}/history")
android/app/src/main/java/com/fieldlog/tech/api/FieldlogApi.kt:73:    @GET("v2/parts/search")
android/app/src/main/java/com/fieldlog/tech/api/FieldlogApi.kt:77:    @PUT("v2/technicians/me/availability")
android/app/src/main/java/com/fieldlog/tech/api/SyncApi.kt:16:    @POST("v2/sync/outbox")
android/app/src/main/java/com/fieldlog/tech/api/SyncApi.kt:20:    @GET("v2/sync/changes")
android/app/src/main/java/com/fieldlog/tech/api/TimesheetApi.kt:15:    @GET("v2/timesheets/{week}")
android/app/src/main/java/com/fieldlog/tech/api/TimesheetApi.kt:19:    @POST("v2/timesheets/{week}/submit")
android/app/src/main/java/com/fieldlog/tech/api/TrackingApi.kt:12:    @POST("v2/tracking/shift/start")
android/app/src/main/java/com/fieldlog/tech/api/TrackingApi.kt:16:    @POST("v2/tracking/shift/end")
""",
    ),
    "v2/visits/{visitId}/signature",
    "In the Retrofit annotation grep, which endpoint path does the signature upload call?",
    "Which server route does the phone app send the customer's sign-off drawing to?",
    "sign-off upload endpoint?",
)

_plant(
    grep_scene(
        "path(",
        "backend/fieldlog/api",
        """\
backend/fieldlog/api/urls.py:9:    path("auth/device/", DeviceTokenView.as_view(), name="auth-device"),
backend/fieldlog/api/urls.py:10:    path("auth/refresh/", DeviceTokenRefreshView.as_view(), \
name="auth-refresh"),
backend/fieldlog/api/urls.py:11:    path("auth/session/", DeviceSessionView.as_view(), name="auth-session"),
backend/fieldlog/api/urls.py:13:    path("jobs/", JobListView.as_view(), name="job-list"),
backend/fieldlog/api/urls.py:14:    path("jobs/<uuid:pk>/", JobDetailView.as_view(), name="job-detail"),
backend/fieldlog/api/urls.py:15:    path("jobs/<uuid:pk>/status/", JobStatusView.as_view(), \
name="job-status"),
backend/fieldlog/api/urls.py:16:    path("jobs/<uuid:pk>/reschedule/", JobRescheduleView.as_view(), \
name="job-reschedule"),
backend/fieldlog/api/urls.py:17:    path("jobs/<uuid:pk>/notes/", JobNoteCreateView.as_view(), \
name="job-notes"),
backend/fieldlog/api/urls.py:18:    path("jobs/<uuid:pk>/attachments/", AttachmentUploadView.as_view(), \
name="job-attachments"),
backend/fieldlog/api/urls.py:20:    path("visits/<uuid:pk>/", VisitDetailView.as_view(), name="visit-detail"),
backend/fieldlog/api/urls.py:21:    path("visits/<uuid:pk>/arrive/", VisitArrivalView.as_view(), \
name="visit-arrive"),
backend/fieldlog/api/urls.py:22:    path("visits/<uuid:pk>/complete/", VisitCloseOutView.as_view(), \
name="visit-complete"),
backend/fieldlog/api/urls.py:23:    path("visits/<uuid:pk>/signature/", SignatureUploadView.as_view(), \
name="visit-signature"),
backend/fieldlog/api/urls.py:24:    path("visits/<uuid:pk>/parts/", PartsUsedView.as_view(), \
name="visit-parts"),
backend/fieldlog/api/urls.py:25:    path("visits/<uuid:pk>/parts/<int:line>/", \
PartsUsedLineView.as_view(), name="visit-part-line"),
backend/fieldlog/api/urls.py:27:    path("assets/<uuid:pk>/history/", AssetHistoryView.as_view(), \
name="asset-history"),
backend/fieldlog/api/urls.py:28:    path("parts/search/", PartSearchView.as_view(), name="part-search"),
backend/fieldlog/api/urls.py:30:    path("technicians/me/availability/", MyAvailabilityView.as_view(), \
name="my-availability"),
backend/fieldlog/api/urls.py:31:    path("timesheets/<str:week>/", TimesheetView.as_view(), name="timesheet"),
backend/fieldlog/api/urls.py:32:    path("timesheets/<str:week>/submit/", \
TimesheetSubmitView.as_view(), name="timesheet-submit"),
backend/fieldlog/api/urls.py:34:    path("sync/outbox/", OutboxIngestView.as_view(), name="sync-outbox"),
backend/fieldlog/api/urls.py:35:    path("sync/changes/", ChangeFeedView.as_view(), name="sync-changes"),
backend/fieldlog/api/urls.py:37:    path("dispatch/board/", DispatchBoardView.as_view(), \
name="dispatch-board"),
backend/fieldlog/api/urls.py:38:    path("dispatch/slots/propose/", SlotProposalView.as_view(), \
name="dispatch-propose"),
""",
    ),
    "VisitCloseOutView",
    "In the path( grep over the api urls, which view handles visits/<uuid:pk>/complete/?",
    "Which Django class handles a technician marking an on-site appointment as finished?",
    "which view completes a visit?",
)

_plant(
    grep_scene(
        "prometheus.New",
        "ingest/internal",
        """\
ingest/internal/batch/flusher.go:31:\tflushSeconds = prometheus.NewHistogram(prometheus.HistogramOpts{Name: \
"ingest_batch_flush_seconds", Buckets: prometheus.ExponentialBuckets(0.005, 2, 12)})
ingest/internal/batch/flusher.go:34:\tbatchSize = prometheus.NewHistogram(prometheus.HistogramOpts{Name: \
"ingest_batch_points", Buckets: []float64{10, 50, 100, 250, 500, 1000}})
ingest/internal/batch/queue.go:19:\tqueueDepth = prometheus.NewGauge(prometheus.GaugeOpts{Name: \
"ingest_queue_depth"})
ingest/internal/decode/metrics.go:9:\tframesReceived = prometheus.NewCounter(prometheus.CounterOpts{Name: \
"ingest_frames_received_total"})
ingest/internal/decode/metrics.go:12:\tframesDiscarded = \
prometheus.NewCounterVec(prometheus.CounterOpts{Name: \
"ingest_frames_discarded_total", Help: "Frames failing magic, version or checksum."}, []string{"reason"})
ingest/internal/decode/metrics.go:15:\tpointsDecoded = prometheus.NewCounter(prometheus.CounterOpts{Name: \
"ingest_points_decoded_total"})
ingest/internal/decode/metrics.go:18:\tfutureFixes = prometheus.NewCounter(prometheus.CounterOpts{Name: \
"ingest_points_future_total"})
ingest/internal/dedupe/window.go:24:\tduplicates = prometheus.NewCounter(prometheus.CounterOpts{Name: \
"ingest_points_duplicate_total"})
ingest/internal/dedupe/window.go:27:\twindowEntries = prometheus.NewGauge(prometheus.GaugeOpts{Name: \
"ingest_dedupe_entries"})
ingest/internal/httpapi/server.go:40:\trequestSeconds = \
prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: \
"ingest_http_request_seconds"}, []string{"route", "code"})
ingest/internal/httpapi/server.go:44:\tinflight = prometheus.NewGauge(prometheus.GaugeOpts{Name: \
"ingest_http_inflight_requests"})
ingest/internal/auth/tokens.go:29:\tauthFailures = prometheus.NewCounterVec(prometheus.CounterOpts{Name: \
"ingest_auth_failures_total"}, []string{"cause"})
ingest/internal/natsout/publisher.go:27:\tpublished = prometheus.NewCounter(prometheus.CounterOpts{Name: \
"ingest_nats_published_total"})
ingest/internal/natsout/publisher.go:30:\tpublishErrors = prometheus.NewCounter(prometheus.CounterOpts{Name: \
"ingest_nats_publish_errors_total"})
ingest/internal/ratelimit/limiter.go:21:\tthrottled = prometheus.NewCounterVec(prometheus.CounterOpts{Name: \
"ingest_devices_throttled_total"}, []string{"device_class"})
ingest/internal/store/copy.go:26:\tcopyRows = prometheus.NewCounter(prometheus.CounterOpts{Name: \
"ingest_copy_rows_total"})
ingest/internal/store/copy.go:29:\tcopySeconds = prometheus.NewHistogram(prometheus.HistogramOpts{Name: \
"ingest_copy_seconds"})
ingest/internal/store/copy.go:32:\tcopyFailures = prometheus.NewCounter(prometheus.CounterOpts{Name: \
"ingest_copy_failures_total"})
ingest/internal/store/pool.go:40:\tpoolAcquireSeconds = \
prometheus.NewHistogram(prometheus.HistogramOpts{Name: \
"ingest_pg_acquire_seconds"})
ingest/internal/store/pool.go:43:\tpoolIdle = prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: \
"ingest_pg_idle_conns"}, idleConns)
""",
    ),
    "ingest_frames_discarded_total",
    "In the prometheus.New grep over ingest/internal, which counter tracks frames that fail validation?",
    "Which metric would I graph to see how many tracker packets the Go service refused as malformed?",
    "metric for bad packets?",
)

_plant(
    grep_scene(
        "ALTER TABLE",
        "ingest/migrations",
        """\
ingest/migrations/000003_add_ignition.down.sql:1:ALTER TABLE positions DROP COLUMN ignition;
ingest/migrations/000003_add_ignition.up.sql:1:ALTER TABLE positions ADD COLUMN ignition boolean;
ingest/migrations/000004_devices_firmware.down.sql:1:ALTER TABLE devices DROP COLUMN firmware;
ingest/migrations/000004_devices_firmware.up.sql:1:ALTER TABLE devices ADD COLUMN firmware text;
ingest/migrations/000005_heading.down.sql:1:ALTER TABLE positions DROP COLUMN heading_deg;
ingest/migrations/000005_heading.up.sql:1:ALTER TABLE positions ADD COLUMN heading_deg smallint;
ingest/migrations/000006_hdop.down.sql:1:ALTER TABLE positions DROP COLUMN hdop, DROP COLUMN satellites;
ingest/migrations/000006_hdop.up.sql:1:ALTER TABLE positions ADD COLUMN hdop real, ADD COLUMN \
satellites smallint;
ingest/migrations/000008_devices_van.up.sql:2:ALTER TABLE devices ADD COLUMN van_registration text;
ingest/migrations/000008_devices_van.up.sql:3:ALTER TABLE devices ADD CONSTRAINT devices_van_key UNIQUE \
(van_registration);
ingest/migrations/000009_positions_fillfactor.up.sql:1:ALTER TABLE positions SET (fillfactor = 100);
ingest/migrations/000010_devices_stats.up.sql:1:ALTER TABLE devices ALTER COLUMN device_id SET STATISTICS 500;
ingest/migrations/000011_positions_autovacuum.down.sql:1:ALTER TABLE positions RESET \
(autovacuum_vacuum_scale_factor, autovacuum_analyze_scale_factor);
ingest/migrations/000011_positions_autovacuum.up.sql:2:ALTER TABLE positions SET \
(autovacuum_vacuum_scale_factor = 0.015, autovacuum_analyze_scale_factor = 0.04);
ingest/migrations/000011_positions_autovacuum.up.sql:3:ALTER TABLE devices SET \
(autovacuum_vacuum_scale_factor = 0.1);
ingest/migrations/000012_odometer.up.sql:1:ALTER TABLE positions ADD COLUMN odometer_m bigint;
ingest/migrations/000013_received_at.up.sql:1:ALTER TABLE positions ADD COLUMN received_at timestamptz \
NOT NULL DEFAULT now();
ingest/migrations/000014_positions_partitioned.down.sql:2:ALTER TABLE positions RENAME TO positions_new;
ingest/migrations/000014_positions_partitioned.down.sql:3:ALTER TABLE positions_old RENAME TO positions;
ingest/migrations/000014_positions_partitioned.up.sql:44:ALTER TABLE positions RENAME TO positions_old;
ingest/migrations/000014_positions_partitioned.up.sql:45:ALTER TABLE positions_new RENAME TO positions;
ingest/migrations/000015_devices_retired.up.sql:1:ALTER TABLE devices ADD COLUMN retired_at timestamptz;
""",
    ),
    "0.015",
    "In the ALTER TABLE grep over ingest/migrations, what autovacuum_vacuum_scale_factor is set on "
    "positions?",
    "How aggressively did we tune background cleanup on the GPS points table: what fraction of changed rows "
    "triggers it?",
    "positions vacuum threshold?",
)

_plant(
    grep_scene(
        "^def ",
        "etl/fieldlog_etl",
        """\
etl/fieldlog_etl/costs.py:21:def _money(value: Decimal) -> Decimal:
etl/fieldlog_etl/costs.py:25:def labour_cost(minutes: int, overtime_minutes: int, weekend: bool) -> Decimal:
etl/fieldlog_etl/costs.py:32:def travel_cost(distance_km: float) -> Decimal:
etl/fieldlog_etl/costs.py:36:def parts_cost(net: Decimal) -> Decimal:
etl/fieldlog_etl/costs.py:40:def job_costs(visits: pd.DataFrame) -> pd.DataFrame:
etl/fieldlog_etl/metrics.py:18:def visits_per_day(visits: pd.DataFrame) -> pd.DataFrame:
etl/fieldlog_etl/metrics.py:41:def utilisation(shifts: pd.DataFrame, visits: pd.DataFrame) -> pd.DataFrame:
etl/fieldlog_etl/metrics.py:77:def mean_time_to_attend(jobs: pd.DataFrame) -> pd.Series:
etl/fieldlog_etl/metrics.py:112:def first_time_fix_rate(visits: pd.DataFrame) -> pd.Series:
etl/fieldlog_etl/metrics.py:139:def repeat_visit_rate(visits: pd.DataFrame, window_days: int = 30) -> \
pd.Series:
etl/fieldlog_etl/metrics.py:166:def sla_compliance(jobs: pd.DataFrame) -> pd.DataFrame:
etl/fieldlog_etl/parts.py:12:def parts_consumption(parts_used: pd.DataFrame) -> pd.DataFrame:
etl/fieldlog_etl/parts.py:38:def van_stock_turnover(parts_used: pd.DataFrame, stock: pd.DataFrame) -> \
pd.DataFrame:
etl/fieldlog_etl/run.py:27:def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
etl/fieldlog_etl/run.py:58:def build_job(name: str, config: Config) -> Job:
etl/fieldlog_etl/run.py:91:def main(argv: list[str] | None = None) -> int:
etl/fieldlog_etl/sinks.py:14:def _schema_for(name: str) -> pa.Schema:
etl/fieldlog_etl/sinks.py:33:def write_parquet(df: pd.DataFrame, url: str, schema: pa.Schema) -> None:
etl/fieldlog_etl/source.py:16:def connect(dsn: str, replica_only: bool = True) -> Connection:
etl/fieldlog_etl/source.py:35:def fetch_visits(conn: Connection, since: date) -> pd.DataFrame:
etl/fieldlog_etl/source.py:70:def fetch_parts_used(conn: Connection, since: date) -> pd.DataFrame:
etl/fieldlog_etl/source.py:96:def fetch_shifts(conn: Connection, since: date) -> pd.DataFrame:
""",
    ),
    "metrics.py:112",
    "In the def grep over etl/fieldlog_etl, where is first_time_fix_rate defined?",
    "In the reporting job's code, where's the function that works out the share of work orders fixed on the "
    "first visit?",
    "where's the first-fix metric computed?",
)

_plant(
    grep_scene(
        "buildConfigField",
        "android",
        """\
android/app/flavors.gradle.kts:9:            buildConfigField("String", "API_BASE_URL", \
"\\"http://10.0.2.2:8000/api/\\"")
android/app/flavors.gradle.kts:10:            buildConfigField("String", "INGEST_URL", \
"\\"http://10.0.2.2:9700/\\"")
android/app/flavors.gradle.kts:11:            buildConfigField("String", "SENTRY_ENV", "\\"dev\\"")
android/app/flavors.gradle.kts:12:            buildConfigField("boolean", "ALLOW_CLEARTEXT", "true")
android/app/flavors.gradle.kts:16:            buildConfigField("String", "API_BASE_URL", \
"\\"https://api.staging.fieldlog.app/\\"")
android/app/flavors.gradle.kts:17:            buildConfigField("String", "INGEST_URL", \
"\\"https://ingest.staging.fieldlog.app/\\"")
android/app/flavors.gradle.kts:18:            buildConfigField("String", "SENTRY_ENV", "\\"staging\\"")
android/app/flavors.gradle.kts:19:            buildConfigField("boolean", "ALLOW_CLEARTEXT", "false")
android/app/flavors.gradle.kts:23:            buildConfigField("String", "API_BASE_URL", \
"\\"https://api.fieldlog.app/\\"")
android/app/flavors.gradle.kts:24:            buildConfigField("String", "INGEST_URL", \
"\\"https://ingest.fieldlog.app/\\"")
android/app/flavors.gradle.kts:25:            buildConfigField("String", "SENTRY_ENV", "\\"production\\"")
android/app/flavors.gradle.kts:26:            buildConfigField("boolean", "ALLOW_CLEARTEXT", "false")
android/app/flavors.gradle.kts:30:            buildConfigField("String", "API_BASE_URL", \
"\\"https://api-eu.fieldlog.app/\\"")
android/app/flavors.gradle.kts:31:            buildConfigField("String", "INGEST_URL", \
"\\"https://ingest-eu.fieldlog.app/\\"")
android/app/flavors.gradle.kts:32:            buildConfigField("String", "SENTRY_ENV", "\\"production-eu\\"")
android/app/flavors.gradle.kts:33:            buildConfigField("boolean", "ALLOW_CLEARTEXT", "false")
android/core/network/build.gradle.kts:18:        buildConfigField("int", "CONNECT_TIMEOUT_SECONDS", "15")
android/core/network/build.gradle.kts:19:        buildConfigField("int", "READ_TIMEOUT_SECONDS", "45")
android/core/network/build.gradle.kts:20:        buildConfigField("String", "USER_AGENT_PREFIX", \
"\\"FieldlogTech\\"")
android/core/data/build.gradle.kts:21:        buildConfigField("int", "DB_SCHEMA_VERSION", "19")
android/core/data/build.gradle.kts:22:        buildConfigField("long", "OUTBOX_MAX_AGE_DAYS", "30L")
android/feature/map/build.gradle.kts:17:        buildConfigField("String", "MAP_STYLE_URL", \
"\\"mapbox://styles/fieldlog/clx2m8v0d00ab01qv6c3e5f7g\\"")
""",
    ),
    "api-eu.fieldlog.app",
    "In the buildConfigField grep, which API base URL does the eu flavour use?",
    "Which server address does the European build of the phone app talk to?",
    "EU app backend url?",
)

_plant(
    grep_scene(
        "image:",
        "deploy",
        """\
deploy/ansible/roles/flower/defaults/main.yml:3:flower_image: mher/flower:2.0.1
deploy/ansible/roles/ingest/defaults/main.yml:2:ingest_image: ghcr.io/fieldlog/ingest:2.9.3
deploy/ansible/roles/ingest/templates/ingest.service.j2:9:# image: {{ ingest_image }}
deploy/ansible/roles/monitoring/defaults/main.yml:4:node_exporter_image: prom/node-exporter:v1.8.1
deploy/ansible/roles/monitoring/defaults/main.yml:5:postgres_exporter_image: \
quay.io/prometheuscommunity/postgres-exporter:v0.15.0
deploy/ansible/roles/monitoring/defaults/main.yml:6:rabbitmq_exporter_image: kbudde/rabbitmq-exporter:1.0.0
deploy/ansible/roles/monitoring/defaults/main.yml:7:cadvisor_image: gcr.io/cadvisor/cadvisor:v0.49.1
deploy/ansible/roles/nats/defaults/main.yml:2:nats_image: nats:2.10.16-alpine
deploy/ansible/roles/nominatim/defaults/main.yml:3:nominatim_image: mediagis/nominatim:4.4
deploy/ansible/roles/etl/defaults/main.yml:2:etl_image: ghcr.io/fieldlog/etl:2024.06.3
deploy/compose/ci.yml:4:    image: postgis/postgis:15-3.4-alpine
deploy/compose/ci.yml:12:    image: rabbitmq:3.13-alpine
deploy/compose/ci.yml:18:    image: nats:2.10-alpine
deploy/compose/loadtest.yml:5:    image: ghcr.io/fieldlog/ingest:main
deploy/compose/loadtest.yml:14:    image: grafana/k6:0.52.0
deploy/compose/loadtest.yml:22:    image: ghcr.io/fieldlog/replay:main
deploy/compose/staging.yml:6:    image: ghcr.io/fieldlog/backend:staging
deploy/compose/staging.yml:20:    image: ghcr.io/fieldlog/backend:staging
deploy/compose/staging.yml:33:    image: ghcr.io/fieldlog/ingest:staging
deploy/compose/staging.yml:41:    image: postgis/postgis:15-3.4
deploy/compose/staging.yml:52:    image: rabbitmq:3.13-management-alpine
deploy/compose/staging.yml:61:    image: redis:7.2.5-alpine
""",
    ),
    "ingest:2.9.3",
    "In the image: grep over deploy, which ingest image tag do the ansible role defaults pin?",
    "Which release of the telemetry service container do the production playbooks roll out?",
    "prod ingester image version?",
)

FACTS: tuple[PlantedFact, ...] = tuple(_FACTS)


# --- distractors ---------------------------------------------------------------------------------

_HEX = "0123456789abcdef"


def _hex(rng: random.Random, n: int) -> str:
    return "".join(rng.choice(_HEX) for _ in range(n))


def _uuid(rng: random.Random) -> str:
    return f"{_hex(rng, 8)}-{_hex(rng, 4)}-4{_hex(rng, 3)}-{rng.choice('89ab')}{_hex(rng, 3)}-{_hex(rng, 12)}"


_PY_TESTS = {
    "customers": ("test_models", "test_sites", "test_geocoding", "test_import_csv", "test_api"),
    "assets": ("test_models", "test_service_due", "test_history", "test_qr_labels"),
    "technicians": ("test_shifts", "test_skills", "test_availability", "test_timesheets", "test_api"),
    "dispatch": ("test_optimiser", "test_slots", "test_board", "test_rebalance", "test_regions"),
    "notifications": ("test_sms", "test_email", "test_templates", "test_retry", "test_purge"),
    "invoices": ("test_numbering", "test_vat", "test_pdf", "test_xero", "test_credit_notes"),
}
_PY_MODULES = ("__init__", "admin", "apps", "models", "serializers", "services", "tasks", "views", "filters")


def _d_pytest_pass(rng: random.Random) -> Scene:
    app = rng.choice(sorted(_PY_TESTS))
    files = _PY_TESTS[app]
    counts = [rng.randint(3, 24) for _ in files]
    total = sum(counts)
    lines = [
        "============================= test session starts ==============================",
        "platform linux -- Python 3.11.9, pytest-8.2.2, pluggy-1.5.0",
        "django: version: 4.2.14, settings: fieldlog.settings.test (from ini)",
        "rootdir: /home/dev/fieldlog/backend",
        "configfile: pytest.ini",
        "plugins: django-4.8.0, xdist-3.6.1, cov-5.0.0, freezegun-0.4.2",
        f"collected {total} items",
        "",
    ]
    done = 0
    for name, count in zip(files, counts, strict=True):
        done += count
        dots = "." * count
        lines.append(f"fieldlog/{app}/tests/{name}.py {dots:<40} [{100 * done // total:3d}%]")
    lines += [
        "",
        "---------- coverage: platform linux, python 3.11.9-final-0 -----------",
        "Name                                        Stmts   Miss  Cover",
        "---------------------------------------------------------------",
    ]
    stmts_total = miss_total = 0
    for module in sorted(rng.sample(_PY_MODULES, rng.randint(5, 9))):
        stmts = rng.randint(0, 260) if module != "__init__" else 0
        miss = rng.randint(0, stmts // 6) if stmts else 0
        stmts_total += stmts
        miss_total += miss
        cover = 100 if not stmts else 100 * (stmts - miss) // stmts
        lines.append(f"{f'fieldlog/{app}/{module}.py':<44}{stmts:5d}  {miss:5d}   {cover:3d}%")
    cover = 100 if not stmts_total else 100 * (stmts_total - miss_total) // stmts_total
    lines += [
        "---------------------------------------------------------------",
        f"{'TOTAL':<44}{stmts_total:5d}  {miss_total:5d}   {cover:3d}%",
        "",
        f"============================== {total} passed in {rng.randint(1, 19)}.{rng.randint(10, 99)}s"
        " ==============================",
    ]
    return bash_scene(f"cd backend && pytest -q --cov=fieldlog/{app} fieldlog/{app}/tests", "\n".join(lines))


_GO_TESTS = {
    "batch": ("TestFlushOnSize", "TestFlushOnInterval", "TestFlushOnShutdown", "TestBackpressure"),
    "geo": ("TestHaversine", "TestBoundingBox", "TestInsideDepot", "TestWrapLongitude", "TestPolyline"),
    "httpapi": ("TestBatchRejectsOversizedBody", "TestBatchAcceptsGzip", "TestHealthz", "TestUnauthorised"),
    "natsout": ("TestPublishSubject", "TestPublishRetries", "TestDryRun", "TestHeadersCarryDevice"),
    "ratelimit": ("TestTokenBucket", "TestBurst", "TestPerDeviceClass", "TestRefill", "TestConcurrentTake"),
    "config": ("TestDefaults", "TestEnvOverride", "TestDurationParse", "TestUnknownKey", "TestMissingFile"),
}
_SUBTESTS = ("empty", "single", "many", "boundary", "nil_input", "large", "unicode", "zero_value")


def _d_go_test_pass(rng: random.Random) -> Scene:
    pkg = rng.choice(sorted(_GO_TESTS))
    lines: list[str] = []
    for test in _GO_TESTS[pkg]:
        subs = rng.sample(_SUBTESTS, rng.randint(2, 3))
        lines.append(f"=== RUN   {test}")
        lines += [f"=== RUN   {test}/{sub}" for sub in subs]
        lines.append(f"--- PASS: {test} (0.{rng.randint(0, 9):02d}s)")
        lines += [f"    --- PASS: {test}/{sub} (0.00s)" for sub in subs]
    lines += ["PASS", f"ok  \tgithub.com/fieldlog/ingest/internal/{pkg}\t0.{rng.randint(5, 400):03d}s"]
    flag = rng.choice(["", " -count=1", " -race", " -shuffle=on"])
    return bash_scene(f"cd ingest && go test -v{flag} ./internal/{pkg}/", "\n".join(lines))


_COMMIT_MESSAGES = (
    "jobs: show the site contact on the job sheet",
    "jobs: status history in the admin",
    "dispatch: optimiser respects technician skills",
    "dispatch: drag and drop on the board keeps the slot length",
    "technicians: shifts can span midnight",
    "notifications: SMS templates per customer",
    "notifications: retry Twilio 5xx with backoff",
    "customers: CSV import validates postcodes",
    "assets: service-due flag after 11 months",
    "android: offline banner shows queued items",
    "android: parts search is debounced",
    "android: bump compose bom",
    "android: dark theme for the signature pad",
    "ingest: reject fixes more than two minutes in the future",
    "ingest: copy batches in one transaction",
    "ingest: healthz reports nats connection",
    "deploy: pgbouncer pool sizes per host",
    "deploy: logrotate for celery logs",
    "etl: utilisation excludes training days",
    "etl: parquet schema for parts consumption",
    "ci: cache gradle between runs",
    "docs: on-call runbook for the broker",
)
_LOG_PATHS = (
    "android/app/src/main",
    "backend/fieldlog/jobs",
    "backend/fieldlog/dispatch",
    "backend/fieldlog/notifications",
    "ingest/internal",
    "deploy/ansible/roles",
    "etl",
    "docs",
)


def _d_git_log(rng: random.Random) -> Scene:
    n = rng.randint(20, 30)
    path = rng.choice(_LOG_PATHS)
    rows = [f"{_hex(rng, 7)} {rng.choice(_COMMIT_MESSAGES)}" for _ in range(n)]
    return bash_scene(f"git log --oneline -{n} -- {path}", "\n".join(rows))


_GREPS = (
    (
        "select_related(",
        "backend/fieldlog/jobs",
        ("views.py", "serializers.py", "services.py", "admin.py", "exports.py"),
        (
            '        qs = Job.objects.select_related("customer", "site")',
            '    return queryset.select_related("assigned_technician__user")',
            '        .select_related("asset")',
        ),
    ),
    (
        "viewModelScope.launch",
        "android/app/src/main/java/com/fieldlog/tech",
        (
            "parts/PartsViewModel.kt",
            "timesheet/TimesheetViewModel.kt",
            "assets/AssetHistoryViewModel.kt",
            "profile/ProfileViewModel.kt",
        ),
        ("        viewModelScope.launch {", "        viewModelScope.launch(dispatchers.io) {"),
    ),
    (
        "ctx.Done()",
        "ingest/internal/batch",
        ("flusher.go", "queue.go", "worker.go"),
        ("\t\tcase <-ctx.Done():", "\tif err := ctx.Err(); err != nil { // ctx.Done() already closed"),
    ),
    (
        "logger.info(",
        "etl",
        ("fieldlog_etl/run.py", "fieldlog_etl/source.py", "fieldlog_etl/parts.py", "tests/conftest.py"),
        ('    logger.info("loaded %d rows", len(df))', '        logger.info("skipping %s: no rows", name)'),
    ),
    (
        "become: true",
        "deploy/ansible/roles",
        ("common/tasks/main.yml", "nginx/tasks/main.yml", "pgbouncer/tasks/main.yml", "nats/tasks/main.yml"),
        ("  become: true", "    become: true"),
    ),
)


def _d_grep(rng: random.Random) -> Scene:
    pattern, root, files, texts = rng.choice(_GREPS)
    target = rng.randint(20, 40)
    hits: set[tuple[str, int]] = set()
    while len(hits) < target:
        hits.add((rng.choice(files), rng.randint(3, 400)))
    rows = [f"{root}/{name}:{line}:{rng.choice(texts)}" for name, line in sorted(hits)]
    return grep_scene(pattern, root, "\n".join(rows))


_TODO_AREAS = {
    "backend/fieldlog/dispatch": (
        ("optimiser.py", "# TODO: weight travel time by time of day"),
        ("optimiser.py", "# TODO: skills matrix should come from the technician profile"),
        ("board.py", "# TODO: lock a slot while a dispatcher drags it"),
        ("regions.py", "# FIXME: postcode districts on a region border match twice"),
        ("slots.py", "# TODO: half-day slots for planned work"),
    ),
    "backend/fieldlog/customers": (
        ("importers.py", "# TODO: report every bad row, not just the first"),
        ("geocoding.py", "# TODO: cache misses for a day"),
        ("models.py", "# TODO: merge duplicate sites by UPRN"),
        ("admin.py", "# FIXME: site search is slow without a trigram index"),
    ),
    "ingest/internal/geo": (
        ("depot.go", "// TODO: depots from the database instead of the config file"),
        ("haversine.go", "// TODO: Vincenty for long trips"),
        ("bbox.go", "// FIXME: boxes across the antimeridian"),
        ("snap.go", "// TODO: snap to road once the OSRM sidecar is deployed"),
    ),
    "etl/tests": (
        ("test_metrics.py", "# TODO: fixtures for a bank holiday week"),
        ("test_costs.py", "# TODO: weekend overtime case"),
        ("test_parts.py", "# TODO: negative stock adjustments"),
        ("conftest.py", "# TODO: share the duckdb fixture across sessions"),
    ),
}


def _d_grep_todo(rng: random.Random) -> Scene:
    root = rng.choice(sorted(_TODO_AREAS))
    target = rng.randint(20, 32)
    hits: dict[tuple[str, int], str] = {}
    while len(hits) < target:
        name, text = rng.choice(_TODO_AREAS[root])
        hits[(name, rng.randint(5, 600))] = text
    rows = [f"{root}/{name}:{line}:{' ' * (4 * (line % 3))}{hits[name, line]}" for name, line in sorted(hits)]
    return grep_scene(rng.choice(["TODO", "TODO|FIXME|XXX", "FIXME|TODO"]), root, "\n".join(rows))


_KOTLIN_TESTS = {
    "core:data": ("OutboxDaoTest", "JobEntityMapperTest", "MigrationTest", "SettingsStoreTest"),
    "core:network": ("ErrorBodyParserTest", "RetryPolicyTest", "DeviceHeadersTest", "DateAdapterTest"),
    "feature:map": ("ClusterBuilderTest", "RoutePreviewTest", "DepotBoundsTest"),
    "feature:timesheet": ("WeekRangeTest", "OvertimeRulesTest", "SubmitValidatorTest"),
    "feature:parts": ("PartSearchTest", "VanStockTest", "BarcodeParserTest"),
}
_KOTLIN_CASES = (
    "empty input returns nothing",
    "maps every field",
    "retries twice then gives up",
    "keeps order after refresh",
    "rejects a blank value",
    "handles the last day of the month",
    "ignores unknown json fields",
    "survives process death",
)


def _d_gradle_pass(rng: random.Random) -> Scene:
    module = rng.choice(sorted(_KOTLIN_TESTS))
    variant = rng.choice(["Debug", "Release"])
    lines = [
        f"> Task :{module}:preBuild UP-TO-DATE",
        f"> Task :{module}:pre{variant}Build UP-TO-DATE",
        f"> Task :{module}:generate{variant}BuildConfig UP-TO-DATE",
        f"> Task :{module}:compile{variant}Kotlin UP-TO-DATE",
        f"> Task :{module}:compile{variant}JavaWithJavac NO-SOURCE",
        f"> Task :{module}:compile{variant}UnitTestKotlin",
        f"> Task :{module}:test{variant}UnitTest",
        "",
    ]
    cases = 0
    for cls in _KOTLIN_TESTS[module]:
        for case in rng.sample(_KOTLIN_CASES, rng.randint(2, 4)):
            lines.append(f"{cls} > {case} PASSED")
            cases += 1
    executed = rng.randint(2, 9)
    up_to_date = rng.randint(10, 40)
    lines += [
        "",
        f"{cases} tests completed, 0 failed",
        "",
        f"BUILD SUCCESSFUL in {rng.randint(6, 59)}s",
        f"{executed + up_to_date} actionable tasks: {executed} executed, {up_to_date} up-to-date",
    ]
    return bash_scene(f"cd android && ./gradlew :{module}:test{variant}UnitTest", "\n".join(lines))


_ANSIBLE_GROUPS = {
    "web": ("stg-web-01.dc2.fieldlog.internal", "stg-web-02.dc2.fieldlog.internal"),
    "workers": ("stg-worker-01.dc2.fieldlog.internal", "stg-worker-02.dc2.fieldlog.internal"),
    "ingest": ("stg-ingest-01.dc2.fieldlog.internal",),
    "monitoring": ("stg-mon-01.dc2.fieldlog.internal",),
}
_ANSIBLE_TASKS = (
    "common : Ensure the deploy user exists",
    "common : Install base packages",
    "common : Configure unattended upgrades",
    "common : Template /etc/hosts",
    "nginx : Render the site config",
    "pgbouncer : Render pgbouncer.ini",
    "celery : Render the supervisor programs",
    "ingest : Pull the ingest image",
    "monitoring : Install node exporter",
    "logrotate : Rotate fieldlog logs",
)


def _d_ansible_ok(rng: random.Random) -> Scene:
    group = rng.choice(sorted(_ANSIBLE_GROUPS))
    hosts = _ANSIBLE_GROUPS[group]
    lines = ["", f"PLAY [{group}] " + "*" * 60, "", "TASK [Gathering Facts] " + "*" * 50]
    lines += [f"ok: [{h}]" for h in hosts]
    ok = 1
    for task in rng.sample(_ANSIBLE_TASKS, rng.randint(5, 8)):
        lines += ["", f"TASK [{task}] " + "*" * 40]
        lines += [f"ok: [{h}]" for h in hosts]
        ok += 1
    lines += ["", "PLAY RECAP " + "*" * 62]
    for h in hosts:
        skipped = rng.randint(0, 4)
        lines.append(
            f"{h:<36}: ok={ok:<4} changed=0    unreachable=0    failed=0    skipped={skipped:<4} "
            "rescued=0    ignored=0"
        )
    return bash_scene(
        f"cd deploy/ansible && ansible-playbook -i inventories/staging site.yml --limit {group} --check",
        "\n".join(lines),
    )


_VIEWMODELS = ("Parts", "AssetHistory", "Profile", "VanStock", "Shift", "Notes")
_VM_FIELDS = (
    ("isLoading", "Boolean", "false"),
    ("error", "String?", "null"),
    ("query", "String", '""'),
    ("page", "Int", "0"),
    ("items", "List<Row>", "emptyList()"),
    ("selectedId", "String?", "null"),
    ("offline", "Boolean", "false"),
    ("lastSyncedAt", "Instant?", "null"),
)


def _d_kotlin_vm(rng: random.Random) -> Scene:
    name = rng.choice(_VIEWMODELS)
    pkg = name.lower()
    fields = rng.sample(_VM_FIELDS, rng.randint(3, 6))
    lines = [
        f"package com.fieldlog.tech.{pkg}",
        "",
        "import androidx.lifecycle.ViewModel",
        "import androidx.lifecycle.viewModelScope",
        "import dagger.hilt.android.lifecycle.HiltViewModel",
        "import kotlinx.coroutines.flow.MutableStateFlow",
        "import kotlinx.coroutines.flow.StateFlow",
        "import kotlinx.coroutines.launch",
        "import javax.inject.Inject",
        "",
        f"data class {name}UiState(",
    ]
    lines += [f"    val {f}: {t} = {d}," for f, t, d in fields]
    lines += [
        ")",
        "",
        "@HiltViewModel",
        f"class {name}ViewModel @Inject constructor(",
        f"    private val repository: {name}Repository,",
        ") : ViewModel() {",
        f"    private val _state = MutableStateFlow({name}UiState())",
        f"    val state: StateFlow<{name}UiState> = _state",
    ]
    for verb in rng.sample(["load", "refresh", "select", "clear", "retry", "search"], rng.randint(2, 4)):
        lines += [
            "",
            f"    fun {verb}() {{",
            "        viewModelScope.launch {",
            f"            _state.value = _state.value.copy({fields[0][0]} = {fields[0][2]})",
            f"            repository.{verb}()",
            "        }",
            "    }",
        ]
    lines.append("}")
    return read_scene(
        f"android/app/src/main/java/com/fieldlog/tech/{pkg}/{name}ViewModel.kt", "\n".join(lines)
    )


_WORKER_TASKS = {
    "default": (
        "fieldlog.jobs.tasks.close_stale_jobs",
        "fieldlog.assets.tasks.flag_service_due",
        "fieldlog.customers.tasks.geocode_site",
        "fieldlog.technicians.tasks.close_open_shifts",
    ),
    "notifications": (
        "fieldlog.notifications.tasks.send_sms",
        "fieldlog.notifications.tasks.send_email",
        "fieldlog.notifications.tasks.retry_failed",
    ),
    "dispatch": (
        "fieldlog.dispatch.tasks.optimise_day",
        "fieldlog.dispatch.tasks.rebalance",
        "fieldlog.dispatch.tasks.propose_slots",
    ),
}


def _d_worker_logs(rng: random.Random) -> Scene:
    queue = rng.choice(sorted(_WORKER_TASKS))
    n = rng.randint(10, 20)
    hour, minute, second = rng.randint(6, 20), rng.randint(0, 30), 0
    lines = []
    for _ in range(n):
        second += rng.randint(1, 50)
        minute, second = minute + second // 60, second % 60
        stamp = f"2024-06-{rng.randint(10, 28):02d} {hour:02d}:{min(minute, 59):02d}:{second:02d}"
        task = f"{rng.choice(_WORKER_TASKS[queue])}[{_uuid(rng)}]"
        worker = rng.randint(1, 4)
        prefix = f"worker-{queue}-1  | [{stamp}"
        lines.append(f"{prefix},{rng.randint(0, 999):03d}: INFO/MainProcess] Task {task} received")
        lines.append(
            f"{prefix},{rng.randint(0, 999):03d}: INFO/ForkPoolWorker-{worker}] Task {task} "
            f"succeeded in {rng.randint(0, 9)}.{rng.randint(10, 99)}s: None"
        )
    return bash_scene(f"docker compose logs --tail={2 * n} worker-{queue}", "\n".join(lines))


_SUMMARIES = (
    "Boiler service",
    "Leaking valve",
    "No hot water",
    "Annual gas safety check",
    "Radiator cold at top",
    "Thermostat replacement",
    "Pump noise",
    "Extractor fan fault",
    "Pressure keeps dropping",
    "Smart meter install",
)


def _d_psql_jobs(rng: random.Random) -> Scene:
    status = rng.choice(["scheduled", "en_route", "on_site", "awaiting_parts"])
    n = rng.randint(18, 30)
    lines = [
        "  reference  |     status     | priority |    scheduled_start     |          summary",
        "-------------+----------------+----------+------------------------+---------------------------",
    ]
    for _ in range(n):
        ref = f"FL-24-{rng.randint(10000, 99999):05d}"
        start = f"2024-06-{rng.randint(10, 28):02d} {rng.randint(7, 17):02d}:{rng.choice(['00', '30'])}:00+01"
        priority = f"P{rng.randint(1, 4)}"
        lines.append(f" {ref} | {status:<14} | {priority:<8} | {start} | {rng.choice(_SUMMARIES)}")
    lines.append(f"({n} rows)")
    query = (
        "SELECT reference, status, priority, scheduled_start, summary FROM jobs_job "
        f"WHERE status = '{status}' ORDER BY scheduled_start LIMIT {n}"
    )
    return bash_scene(f'psql fieldlog -c "{query}"', "\n".join(lines))


_GROUP_VARS = {
    "web": (
        ("gunicorn_workers", (3, 4, 5)),
        ("gunicorn_timeout", (30, 60)),
        ("gunicorn_max_requests", (1000, 2000)),
        ("nginx_worker_connections", (1024, 2048)),
        ("static_expires_days", (7, 30)),
    ),
    "workers": (
        ("celery_default_concurrency", (2, 4)),
        ("celery_notifications_concurrency", (1, 2)),
        ("celery_max_tasks_per_child", (200, 500)),
        ("celery_log_level", ("info", "warning")),
        ("flower_basic_auth_user", ("ops", "fieldlog")),
    ),
    "ingest": (
        ("ingest_batch_size", (250, 500, 1000)),
        ("ingest_batch_workers", (2, 4)),
        ("ingest_log_level", ("info", "debug")),
        ("ingest_max_conns", (8, 12, 16)),
        ("ingest_dedupe_window", ("2m", "10m")),
    ),
}


def _d_group_vars(rng: random.Random) -> Scene:
    env = rng.choice(["staging", "dev", "loadtest"])
    group = rng.choice(sorted(_GROUP_VARS))
    lines = ["---", f"# {env}: {group} hosts", f"fieldlog_env: {env}", ""]
    for key, choices in _GROUP_VARS[group]:
        lines.append(f"{key}: {rng.choice(choices)}")
    lines += ["", "logrotate_keep_days: " + str(rng.choice([7, 14])), "", "extra_packages:"]
    lines += [f"  - {p}" for p in rng.sample(["htop", "jq", "ncdu", "tmux", "iotop", "curl", "rsync"], 4)]
    lines += ["", "firewall_allow:"]
    for _ in range(rng.randint(3, 6)):
        port = rng.choice([22, 80, 443, 9100, 9464])
        lines.append(f"  - {{ port: {port}, from: 10.{rng.randint(20, 29)}.0.0/16 }}")
    lines += ["", f"sentry_environment: {env}", f"sentry_traces_sample_rate: 0.{rng.randint(1, 9)}"]
    return read_scene(f"deploy/ansible/inventories/{env}/group_vars/{group}.yml", "\n".join(lines))


_GO_FILES = {
    "geo": ("haversine", "bbox", "depot"),
    "ratelimit": ("bucket", "classes"),
    "health": ("health", "checks"),
    "clock": ("clock", "fake"),
}


def _d_go_src(rng: random.Random) -> Scene:
    pkg = rng.choice(sorted(_GO_FILES))
    name = rng.choice(_GO_FILES[pkg])
    kind = name.capitalize()
    lines = [
        f"package {pkg}",
        "",
        "import (",
        '\t"context"',
        '\t"sync"',
        '\t"time"',
        ")",
        "",
        f"// {kind} is safe for concurrent use.",
        f"type {kind} struct {{",
        "\tmu      sync.Mutex",
        f"\tlimit   {rng.choice(['int', 'int64', 'uint32'])}",
        f"\tperiod  time.Duration // default {rng.choice([1, 5, 10, 30])}s",
        "\tupdated time.Time",
        "}",
        "",
        f"// New{kind} returns a {name} with the given limit.",
        f"func New{kind}(limit int) *{kind} {{",
        f"\treturn &{kind}{{limit: limit, period: time.Second}}",
        "}",
    ]
    for verb in rng.sample(["Check", "Reset", "Update", "Snapshot", "Close"], rng.randint(2, 4)):
        lines += [
            "",
            f"func (x *{kind}) {verb}(ctx context.Context) error {{",
            "\tx.mu.Lock()",
            "\tdefer x.mu.Unlock()",
            "\tif err := ctx.Err(); err != nil {",
            "\t\treturn err",
            "\t}",
            "\tx.updated = time.Now()",
            "\treturn nil",
            "}",
        ]
    return read_scene(f"ingest/internal/{pkg}/{name}.go", "\n".join(lines))


_ETL_JOBS = ("visits_daily", "technician_utilisation", "parts_consumption", "first_time_fix")
_ETL_STEPS = (
    "fieldlog_etl.source visits: {n} rows",
    "fieldlog_etl.source shifts: {n} rows",
    "fieldlog_etl.source parts_used: {n} rows",
    "fieldlog_etl.transform dropped {n} cancelled visits",
    "fieldlog_etl.transform joined technicians: {n} rows",
    "fieldlog_etl.transform grouped by region: {n} groups",
    "fieldlog_etl.checks null check passed on {n} rows",
)


def _d_etl_dry_run(rng: random.Random) -> Scene:
    job = rng.choice(_ETL_JOBS)
    date = f"2024-0{rng.randint(4, 6)}-{rng.randint(10, 28):02d}"
    second = rng.randint(0, 20)
    lines = [
        f"2024-07-02 05:00:{second:02d},{rng.randint(0, 999):03d} INFO fieldlog_etl.run job={job} date={date}"
    ]
    for _ in range(rng.randint(18, 28)):
        second = min(59, second + rng.randint(0, 2))
        step = rng.choice(_ETL_STEPS).replace("{n}", str(rng.randint(10, 90000)))
        lines.append(f"2024-07-02 05:00:{second:02d},{rng.randint(0, 999):03d} INFO {step}")
    finished = f"05:01:{rng.randint(0, 59):02d}"
    lines.append(f"2024-07-02 {finished},000 INFO fieldlog_etl.sinks dry run: nothing written")
    command = f"cd etl && python -m fieldlog_etl.run --job {job} --date {date} --dry-run"
    return bash_scene(command, "\n".join(lines))


_TEMPLATES: tuple[Callable[[random.Random], Scene], ...] = (
    _d_pytest_pass,
    _d_go_test_pass,
    _d_git_log,
    _d_grep,
    _d_grep_todo,
    _d_gradle_pass,
    _d_ansible_ok,
    _d_kotlin_vm,
    _d_worker_logs,
    _d_psql_jobs,
    _d_group_vars,
    _d_go_src,
    _d_etl_dry_run,
)

_ANSWERS = tuple(fact.answer for fact in FACTS)
# A distractor runs none of the facts' commands on none of their paths, and its output names neither.
_FACT_NAMES = frozenset(str(value) for fact in FACTS for value in fact.scene.args.values())
_FACT_TEXTS = tuple(
    str(fact.scene.args["path"] if fact.scene.tool == "read_file" else fact.scene.args["command"])
    for fact in FACTS
    if fact.scene.tool in ("read_file", "bash")
)


def _acceptable(scene: Scene) -> bool:
    if any(str(value) in _FACT_NAMES for value in scene.args.values()):
        return False
    if any(answer in str(value) for answer in _ANSWERS for value in scene.args.values()):
        return False
    return not any(answer in scene.output for answer in _ANSWERS) and not any(
        name in scene.output for name in _FACT_TEXTS
    )


def distractors(seed: int, count: int) -> list[Scene]:
    """`count` look-alike outputs of the project holding no fact's answer, path or command."""
    return draw(seed, count, _TEMPLATES, _acceptable)
