"""A third held-out set of planted facts for the recall probe, from a project unlike the other sets'.

The project is "tidewater", a marine-shipping logistics platform: an Elixir/Phoenix API with Oban
jobs (api/), a Swift iOS app for ship crews (ios/), a C++ route-optimisation engine on OR-Tools
(solver/), a Ruby on Rails back-office admin (admin/), Terraform on GCP and a Helm chart on GKE
(infra/), with Redis, Postgres and PostGIS, and Prometheus alert rules. Each fact is one tool output
of that project (a file read, a shell command, a grep) with one short verbatim answer in it, among
other values of the same kind, and three questions a developer might ask about it long after the
output left the context: a direct one that may name the file or command, a paraphrase in the
developer's own words, and a short vague one. None of the questions holds its answer.

The set was written without reading the search code or the other sets' facts, and is kept sealed:
nothing is tuned on it. It is in the probe's sets (`recall_probe.FACT_SETS`) since the shipped
ranking was measured on it once (2026-12-04), but not in `recall_probe.HELD_OUT`, so the report
gives its rates and never prints its misses: the next change to recall's ranking is made on the
other sets, then measured on this one unread.

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


def _grep_under(pattern: str, path: str, hits: str) -> Scene:
    """A grep over the folder `path`, its hits written relative to it ("file:line:text")."""
    lines = hits.rstrip("\n").split("\n")
    return grep_scene(pattern, path, "\n".join(f"{path}/{line}" for line in lines))


# --- file reads ----------------------------------------------------------------------------------

_plant(
    read_scene(
        "api/config/runtime.exs",
        """\
import Config

# Runtime configuration, evaluated on boot of the release (not at compile time).
# Every value here can be overridden by the environment the Helm chart injects.

if System.get_env("PHX_SERVER") do
  config :tidewater, TidewaterWeb.Endpoint, server: true
end

config :tidewater, :deploy_env, System.get_env("TW_DEPLOY_ENV", "dev")

if config_env() == :prod do
  database_url =
    System.get_env("DATABASE_URL") ||
      raise "environment variable DATABASE_URL is missing (ecto://USER:PASS@HOST/DATABASE)"

  maybe_ipv6 = if System.get_env("ECTO_IPV6") in ~w(true 1), do: [:inet6], else: []

  config :tidewater, Tidewater.Repo,
    url: database_url,
    types: Tidewater.PostgresTypes,
    pool_size: String.to_integer(System.get_env("POOL_SIZE") || "18"),
    queue_target: 5_000,
    queue_interval: 10_000,
    timeout: 30_000,
    socket_options: maybe_ipv6,
    ssl: [cacertfile: "/etc/tidewater/cloudsql/server-ca.pem", verify: :verify_peer]

  config :tidewater, Tidewater.ReadRepo,
    url: System.get_env("READ_DATABASE_URL") || database_url,
    types: Tidewater.PostgresTypes,
    pool_size: String.to_integer(System.get_env("READ_POOL_SIZE") || "12"),
    timeout: 45_000,
    socket_options: maybe_ipv6

  secret_key_base =
    System.get_env("SECRET_KEY_BASE") ||
      raise "environment variable SECRET_KEY_BASE is missing (mix phx.gen.secret)"

  host = System.get_env("PHX_HOST") || "api.tidewater.app"
  port = String.to_integer(System.get_env("PORT") || "4080")

  config :tidewater, TidewaterWeb.Endpoint,
    url: [host: host, port: 443, scheme: "https"],
    http: [
      ip: {0, 0, 0, 0, 0, 0, 0, 0},
      port: port,
      transport_options: [max_connections: 16_384, num_acceptors: 64],
      protocol_options: [idle_timeout: 65_000]
    ],
    check_origin: ["https://admin.tidewater.app", "https://ops.tidewater.app"],
    secret_key_base: secret_key_base

  config :tidewater, TidewaterWeb.CrewSocket,
    heartbeat_timeout: 60_000,
    max_frame_size: 262_144

  config :tidewater, :prom_ex,
    metrics_server: [port: String.to_integer(System.get_env("METRICS_PORT") || "9568")]

  config :tidewater, Tidewater.Redis,
    host: System.get_env("REDIS_HOST", "10.42.16.5"),
    port: String.to_integer(System.get_env("REDIS_PORT") || "6379"),
    database: 0,
    sync_connect: false

  config :tidewater, Tidewater.Solver.Client,
    endpoint: System.get_env("SOLVER_GRPC", "solver.tidewater-prod.svc.cluster.local:9090"),
    deadline_ms: 20_000

  config :tidewater, Oban,
    repo: Tidewater.Repo,
    notifier: Oban.Notifiers.PG,
    peer: Oban.Peers.Postgres,
    queues: [
      default: 10,
      ais_ingest: 30,
      eta_recompute: 6,
      notifications: 8,
      manifests: 4
    ]

  config :tidewater, Tidewater.Mailer,
    adapter: Swoosh.Adapters.Mailgun,
    api_key: System.fetch_env!("MAILGUN_API_KEY"),
    domain: "mg.tidewater.app"
end
""",
    ),
    "4080",
    "What default PORT does api/config/runtime.exs fall back to for the Phoenix endpoint?",
    "If nobody sets the env var, which port does the Elixir backend bind to inside its container?",
    "api http port fallback",
)

_plant(
    read_scene(
        "api/config/config.exs",
        """\
import Config

config :tidewater,
  ecto_repos: [Tidewater.Repo],
  generators: [timestamp_type: :utc_datetime_usec, binary_id: true]

config :tidewater, TidewaterWeb.Endpoint,
  url: [host: "localhost"],
  adapter: Bandit.PhoenixAdapter,
  render_errors: [formats: [json: TidewaterWeb.ErrorJSON], layout: false],
  pubsub_server: Tidewater.PubSub

config :tidewater, Tidewater.Repo,
  migration_timestamps: [type: :utc_datetime_usec],
  migration_primary_key: [type: :binary_id]

config :tidewater, Oban,
  engine: Oban.Engines.Basic,
  repo: Tidewater.Repo,
  queues: [default: 5, ais_ingest: 10, eta_recompute: 2, notifications: 4, manifests: 2],
  plugins: [
    {Oban.Plugins.Pruner, max_age: 172_800},
    {Oban.Plugins.Lifeline, rescue_after: :timer.minutes(20)},
    {Oban.Plugins.Reindexer, schedule: "@weekly"},
    {Oban.Plugins.Cron,
     timezone: "Etc/UTC",
     crontab: [
       {"*/5 * * * *", Tidewater.Workers.AisSnapshotSweep},
       {"*/15 * * * *", Tidewater.Workers.EtaRecomputeFanout},
       {"17 */2 * * *", Tidewater.Workers.BerthWindowReconcile},
       {"40 3 * * *", Tidewater.Workers.PurgeStalePositions},
       {"0 6 * * 1", Tidewater.Workers.WeeklyFuelReport, args: %{"format" => "xlsx"}},
       {"25 * * * *", Tidewater.Workers.TideTableRefresh},
       {"0 */6 * * *", Tidewater.Workers.SanctionsListSync},
       {"@daily", Tidewater.Workers.CrewCertificateExpiry}
     ]}
  ]

config :logger, :console,
  format: "$time $metadata[$level] $message\\n",
  metadata: [:request_id, :vessel_imo, :oban_job_id, :oban_queue]

config :phoenix, :json_library, Jason

config :tidewater, Tidewater.Ais,
  provider: Tidewater.Ais.Providers.Relay,
  position_max_age_s: 900,
  dedupe_window_s: 30

config :tidewater, Tidewater.Tides,
  source: :admiralty,
  cache_ttl_s: 21_600

config :geo_postgis, json_library: Jason

import_config "#{config_env()}.exs"
""",
    ),
    "17 */2 * * *",
    "What cron expression is BerthWindowReconcile scheduled with in api/config/config.exs?",
    "How often does the background job that reconciles berth booking slots get kicked off?",
    "berth reconcile job schedule",
)

_plant(
    read_scene(
        "api/mix.exs",
        """\
defmodule Tidewater.MixProject do
  use Mix.Project

  def project do
    [
      app: :tidewater,
      version: "0.58.0",
      elixir: "~> 1.16",
      elixirc_paths: elixirc_paths(Mix.env()),
      start_permanent: Mix.env() == :prod,
      aliases: aliases(),
      deps: deps(),
      releases: [tidewater: [include_executables_for: [:unix], strip_beams: true]]
    ]
  end

  def application do
    [
      mod: {Tidewater.Application, []},
      extra_applications: [:logger, :runtime_tools, :os_mon]
    ]
  end

  defp elixirc_paths(:test), do: ["lib", "test/support"]
  defp elixirc_paths(_), do: ["lib"]

  defp deps do
    [
      {:phoenix, "~> 1.7.14"},
      {:phoenix_ecto, "~> 4.6"},
      {:ecto_sql, "~> 3.11"},
      {:postgrex, ">= 0.18.0"},
      {:geo_postgis, "~> 3.6"},
      {:bandit, "~> 1.5"},
      {:oban, "~> 2.17"},
      {:redix, "~> 1.5"},
      {:finch, "~> 0.18"},
      {:req, "~> 0.5.2"},
      {:grpc, "~> 0.8.1"},
      {:protobuf, "~> 0.12.0"},
      {:goth, "~> 1.4.3"},
      {:google_api_pub_sub, "~> 0.38"},
      {:swoosh, "~> 1.16"},
      {:jason, "~> 1.4"},
      {:nimble_csv, "~> 1.2"},
      {:tz, "~> 0.27"},
      {:prom_ex, "~> 1.9"},
      {:opentelemetry_exporter, "~> 1.7"},
      {:opentelemetry_phoenix, "~> 1.2"},
      {:opentelemetry_ecto, "~> 1.2"},
      {:sentry, "~> 10.6"},
      {:hammer, "~> 6.2"},
      {:credo, "~> 1.7", only: [:dev, :test], runtime: false},
      {:dialyxir, "~> 1.4", only: [:dev], runtime: false},
      {:mox, "~> 1.1", only: :test},
      {:ex_machina, "~> 2.8", only: :test},
      {:bypass, "~> 2.1", only: :test}
    ]
  end

  defp aliases do
    [
      setup: ["deps.get", "ecto.setup"],
      "ecto.setup": ["ecto.create", "ecto.migrate", "run priv/repo/seeds.exs"],
      "ecto.reset": ["ecto.drop", "ecto.setup"],
      test: ["ecto.create --quiet", "ecto.migrate --quiet", "test"],
      lint: ["format --check-formatted", "credo --strict"]
    ]
  end
end
""",
    ),
    "1.4.3",
    "Which version of goth does api/mix.exs ask for?",
    "What version of the Google service-account token library does the Elixir backend depend on?",
    "google auth lib version backend",
)

_plant(
    read_scene(
        "ios/TidewaterCrew/Config/Production.xcconfig",
        """\
// Production.xcconfig
// Build settings for the App Store / TestFlight configuration of the crew app.
// Shared values live in Base.xcconfig; do not put secrets here (they come from CI).

#include "Base.xcconfig"

PRODUCT_BUNDLE_IDENTIFIER = app.tidewater.crew
PRODUCT_NAME = Tidewater Crew
MARKETING_VERSION = 3.12.0
CURRENT_PROJECT_VERSION = 1207
IPHONEOS_DEPLOYMENT_TARGET = 16.4

// Backend hosts (scheme is always https, the app pins certificates per host)
TW_API_HOST = api.tidewater.app
TW_SOCKET_HOST = ws.tidewater.app
TW_UPLOAD_HOST = uploads.tidewater.app
TW_CHART_TILE_HOST = charts-cdn.tidewater.app
TW_WEATHER_HOST = metocean.tidewater.app
TW_TELEMETRY_HOST = otel.tidewater.app
TW_STATUS_PAGE_HOST = status.tidewater.app

// Certificate pinning: SPKI sha256 of the intermediate, primary and backup
TW_PIN_PRIMARY = 8Rw90Ej3Ttt8RRkrg+WYDS9n7IS03bk5bjP/UXPtaY8=
TW_PIN_BACKUP = YLh1dUR9y6Kja30RrAn7JKnbQG/uEtLMkBgFF2Fuihg=

// Sync
TW_SYNC_FOREGROUND_INTERVAL = 60
TW_SYNC_BACKGROUND_INTERVAL = 900
TW_OUTBOX_MAX_BATCH = 50
TW_POSITION_REPORT_MIN_DISTANCE_M = 250

// Feature flags baked into the build (remote config can still turn them off)
TW_FEATURE_NOON_REPORT_V2 = YES
TW_FEATURE_OFFLINE_CHARTS = YES
TW_FEATURE_BUNKER_SURVEY = NO

SWIFT_ACTIVE_COMPILATION_CONDITIONS = PRODUCTION
SWIFT_OPTIMIZATION_LEVEL = -O
SWIFT_COMPILATION_MODE = wholemodule
DEBUG_INFORMATION_FORMAT = dwarf-with-dsym
ENABLE_TESTABILITY = NO
VALIDATE_PRODUCT = YES

CODE_SIGN_STYLE = Manual
CODE_SIGN_IDENTITY = Apple Distribution
DEVELOPMENT_TEAM = 7QK2M4XH9B
PROVISIONING_PROFILE_SPECIFIER = match AppStore app.tidewater.crew
""",
    ),
    "charts-cdn.tidewater.app",
    "What is TW_CHART_TILE_HOST set to in ios/TidewaterCrew/Config/Production.xcconfig?",
    "In the App Store build of the crew iPhone app, which host do the nautical chart tiles come from?",
    "chart tiles host prod",
)

_plant(
    read_scene(
        "ios/TidewaterCrew.xcworkspace/xcshareddata/swiftpm/Package.resolved",
        """\
{
  "originHash" : "4c1f0e7d2b9a86e35f1d7c02a4be91f3d06c58a7e2b4f9d1c3a5e7f0b2d4c6a8",
  "pins" : [
    {
      "identity" : "grdb.swift",
      "kind" : "remoteSourceControl",
      "location" : "https://github.com/groue/GRDB.swift.git",
      "state" : {
        "revision" : "d3bb72f2e7a2ff6e52e3e4ba5d8fc1a6e27d9c41",
        "version" : "6.29.1"
      }
    },
    {
      "identity" : "swift-log",
      "kind" : "remoteSourceControl",
      "location" : "https://github.com/apple/swift-log.git",
      "state" : {
        "revision" : "9cb486020ebf03bfa5b5df985387a14a98744537",
        "version" : "1.6.1"
      }
    },
    {
      "identity" : "swift-protobuf",
      "kind" : "remoteSourceControl",
      "location" : "https://github.com/apple/swift-protobuf.git",
      "state" : {
        "revision" : "e17d61f26df0f0e06f58f6977ba05a097a720106",
        "version" : "1.27.0"
      }
    },
    {
      "identity" : "swift-collections",
      "kind" : "remoteSourceControl",
      "location" : "https://github.com/apple/swift-collections.git",
      "state" : {
        "revision" : "3d2dc41a01f9e49d84f0a3925fb858bed64f702d",
        "version" : "1.1.2"
      }
    },
    {
      "identity" : "kingfisher",
      "kind" : "remoteSourceControl",
      "location" : "https://github.com/onevcat/Kingfisher.git",
      "state" : {
        "revision" : "2ef543ee21d63734e1c004ad6c870255e8716c50",
        "version" : "7.12.0"
      }
    },
    {
      "identity" : "sentry-cocoa",
      "kind" : "remoteSourceControl",
      "location" : "https://github.com/getsentry/sentry-cocoa.git",
      "state" : {
        "revision" : "5575af93efb776414f243e93d6af9f6258dc539a",
        "version" : "8.30.0"
      }
    },
    {
      "identity" : "maplibre-gl-native-distribution",
      "kind" : "remoteSourceControl",
      "location" : "https://github.com/maplibre/maplibre-gl-native-distribution",
      "state" : {
        "revision" : "8b7ac4ebd5c3c1aa6dbd8d06b8d41d9ec19a5a0b",
        "version" : "6.5.0"
      }
    },
    {
      "identity" : "keychainaccess",
      "kind" : "remoteSourceControl",
      "location" : "https://github.com/kishikawakatsumi/KeychainAccess.git",
      "state" : {
        "revision" : "84e546727d66f1adc5439debad16270d0fdd04e7",
        "version" : "4.2.2"
      }
    },
    {
      "identity" : "swift-snapshot-testing",
      "kind" : "remoteSourceControl",
      "location" : "https://github.com/pointfreeco/swift-snapshot-testing",
      "state" : {
        "revision" : "c097f955b4e724690f0fc8ffb7a6d4b881c9c4e3",
        "version" : "1.17.2"
      }
    }
  ],
  "version" : 3
}
""",
    ),
    "6.29.1",
    "Which GRDB.swift version is pinned in the iOS workspace's Package.resolved?",
    "What version of the SQLite wrapper is the crew app locked to right now?",
    "ios sqlite library version",
)

_plant(
    read_scene(
        "solver/CMakeLists.txt",
        """\
cmake_minimum_required(VERSION 3.24)
project(tidewater_solver VERSION 2.8.1 LANGUAGES CXX)

set(CMAKE_CXX_STANDARD 20)
set(CMAKE_CXX_STANDARD_REQUIRED ON)
set(CMAKE_CXX_EXTENSIONS OFF)
set(CMAKE_EXPORT_COMPILE_COMMANDS ON)

if(NOT CMAKE_BUILD_TYPE)
  set(CMAKE_BUILD_TYPE RelWithDebInfo CACHE STRING "" FORCE)
endif()

option(TW_SOLVER_ASAN "Build with AddressSanitizer" OFF)
option(TW_SOLVER_BENCH "Build the scenario benchmarks" ON)

# OR-Tools is installed into /opt/or-tools in the builder image (see solver/Dockerfile).
list(APPEND CMAKE_PREFIX_PATH /opt/or-tools)
find_package(ortools 9.10 CONFIG REQUIRED)
find_package(absl CONFIG REQUIRED)
find_package(protobuf 26.1 CONFIG REQUIRED)
find_package(gRPC 1.62 CONFIG REQUIRED)
find_package(spdlog 1.13 REQUIRED)
find_package(nlohmann_json 3.11.3 REQUIRED)
find_package(prometheus-cpp 1.2 CONFIG REQUIRED)

include(FetchContent)
FetchContent_Declare(
  googletest
  URL https://github.com/google/googletest/archive/refs/tags/v1.14.0.tar.gz
  URL_HASH SHA256=8ad598c73ad796e0d8280b082cebd82a630d73e73cd3c70057938a6501bba5d7
)
FetchContent_Declare(
  h3
  GIT_REPOSITORY https://github.com/uber/h3.git
  GIT_TAG v4.1.0
)
FetchContent_MakeAvailable(googletest h3)

add_subdirectory(proto)

add_library(tw_solver_core
  src/cost_model.cc
  src/distance_matrix.cc
  src/tide_windows.cc
  src/berth_constraints.cc
  src/route_builder.cc
  src/search_params.cc
)
target_include_directories(tw_solver_core PUBLIC include)
target_link_libraries(tw_solver_core
  PUBLIC ortools::ortools absl::flat_hash_map spdlog::spdlog nlohmann_json::nlohmann_json h3
)
target_compile_options(tw_solver_core PRIVATE -Wall -Wextra -Wpedantic -Werror)

add_executable(tw_solve src/main_cli.cc)
target_link_libraries(tw_solve PRIVATE tw_solver_core)

add_executable(tw_solver_server src/main_server.cc src/grpc_service.cc src/metrics.cc)
target_link_libraries(tw_solver_server
  PRIVATE tw_solver_core tw_proto gRPC::grpc++ gRPC::grpc++_reflection prometheus-cpp::pull
)

if(TW_SOLVER_ASAN)
  target_compile_options(tw_solver_core PRIVATE -fsanitize=address -fno-omit-frame-pointer)
  target_link_options(tw_solver_core PUBLIC -fsanitize=address)
endif()

enable_testing()
add_subdirectory(tests)
if(TW_SOLVER_BENCH)
  add_subdirectory(bench)
endif()
""",
    ),
    "9.10",
    "Which OR-Tools version does solver/CMakeLists.txt require in find_package?",
    "What release of Google's optimisation library does the C++ route engine build against?",
    "or-tools version solver",
)

_plant(
    read_scene(
        "solver/config/search.yaml",
        """\
# Routing search parameters for tw_solver_server.
# Loaded at start-up; a request may override time_limit and solution_limit only.

defaults:
  first_solution_strategy: PATH_CHEAPEST_ARC
  local_search_metaheuristic: GUIDED_LOCAL_SEARCH
  guided_local_search_lambda_coefficient: 0.1
  time_limit: 20s
  lns_time_limit: 250ms
  solution_limit: 0
  log_search: false
  use_full_propagation: false

# Used when a voyage plan has fewer than eight port calls: exhaustive enough to finish early.
small_voyage:
  first_solution_strategy: PARALLEL_CHEAPEST_INSERTION
  local_search_metaheuristic: GREEDY_DESCENT
  time_limit: 3s

# Used by the nightly fleet re-plan (all vessels at once, no user waiting).
fleet_replan:
  first_solution_strategy: SAVINGS
  local_search_metaheuristic: SIMULATED_ANNEALING
  time_limit: 300s
  lns_time_limit: 1s
  log_search: true

# Used when the dispatcher asks for "what if" alternatives from the admin.
what_if:
  first_solution_strategy: LOCAL_CHEAPEST_INSERTION
  local_search_metaheuristic: TABU_SEARCH
  time_limit: 8s
  solution_limit: 25

operators:
  use_relocate: true
  use_exchange: true
  use_cross: true
  use_two_opt: true
  use_or_opt: true
  use_lin_kernighan: false
  use_tsp_opt: false
  use_make_active: true
  use_make_inactive: true

dimensions:
  time:
    slack_max: 7200        # seconds a vessel may wait at anchor before a berth window
    capacity: 2592000      # 30 days horizon, seconds
    fix_start_cumul_to_zero: false
  fuel:
    slack_max: 0
    capacity: 4200         # tonnes of fuel oil
  draft:
    capacity: 1650         # centimetres
""",
    ),
    "GUIDED_LOCAL_SEARCH",
    "What local_search_metaheuristic do the defaults in solver/config/search.yaml use?",
    "After the first route is found, which improvement strategy does the optimiser use by default?",
    "default solver metaheuristic",
)

_plant(
    read_scene(
        "admin/config/database.yml",
        """\
default: &default
  adapter: postgis
  encoding: unicode
  schema_search_path: public,postgis
  pool: <%= ENV.fetch("RAILS_MAX_THREADS", 5) %>
  prepared_statements: false
  connect_timeout: 5
  variables:
    statement_timeout: 15s
    lock_timeout: 4s

development:
  primary:
    <<: *default
    database: tidewater_dev
    host: localhost
    port: 5432
  primary_replica:
    <<: *default
    database: tidewater_dev
    host: localhost
    port: 5432
    replica: true

test:
  primary:
    <<: *default
    database: tidewater_admin_test<%= ENV['TEST_ENV_NUMBER'] %>
    host: <%= ENV.fetch("PGHOST", "localhost") %>

staging:
  primary:
    <<: *default
    database: tidewater
    host: tw-pg.c.tidewater-staging.internal
    username: tw_admin
    password: <%= ENV["ADMIN_DB_PASSWORD"] %>
    sslmode: verify-ca
    sslrootcert: /etc/tidewater/cloudsql/server-ca.pem
  primary_replica:
    <<: *default
    database: tidewater
    host: tw-pg.c.tidewater-staging.internal
    username: tw_admin_ro
    password: <%= ENV["ADMIN_DB_RO_PASSWORD"] %>
    replica: true

production:
  primary:
    <<: *default
    database: tidewater
    host: tw-pg-rw.c.tidewater-prod.internal
    username: tw_admin
    password: <%= ENV["ADMIN_DB_PASSWORD"] %>
    pool: <%= ENV.fetch("RAILS_MAX_THREADS", 8) %>
    sslmode: verify-ca
    sslrootcert: /etc/tidewater/cloudsql/server-ca.pem
  primary_replica:
    <<: *default
    database: tidewater
    host: tw-pg-ro.c.tidewater-prod.internal
    username: tw_admin_ro
    password: <%= ENV["ADMIN_DB_RO_PASSWORD"] %>
    replica: true
    variables:
      statement_timeout: 60s
""",
    ),
    "tw-pg-ro.c.tidewater-prod.internal",
    "What host does the production primary_replica use in admin/config/database.yml?",
    "Which database hostname do the back-office's read-only queries go to in prod?",
    "admin read replica host",
)

_plant(
    read_scene(
        "admin/Gemfile.lock",
        """\
GEM
  remote: https://rubygems.org/
  specs:
    actioncable (7.1.3.4)
      actionpack (= 7.1.3.4)
      activesupport (= 7.1.3.4)
      nio4r (~> 2.0)
      websocket-driver (>= 0.6.1)
    actionpack (7.1.3.4)
      actionview (= 7.1.3.4)
      activesupport (= 7.1.3.4)
      nokogiri (>= 1.8.5)
      rack (>= 2.2.4)
    activerecord (7.1.3.4)
      activemodel (= 7.1.3.4)
      activesupport (= 7.1.3.4)
      timeout (>= 0.4.0)
    activerecord-postgis-adapter (9.0.2)
      activerecord (~> 7.1.0)
      rgeo-activerecord (~> 7.0.0)
    administrate (0.20.1)
      actionpack (>= 6.0, < 8.0)
      kaminari (~> 1.2.2)
    bootsnap (1.18.3)
      msgpack (~> 1.2)
    devise (4.9.4)
      bcrypt (~> 3.0)
      warden (~> 1.2.3)
    google-cloud-storage (1.52.0)
      google-apis-storage_v1 (~> 0.38)
    nokogiri (1.16.6-x86_64-linux)
      racc (~> 1.4)
    pg (1.5.6)
    puma (6.4.2)
      nio4r (~> 2.0)
    pundit (2.3.2)
    rack-attack (6.7.0)
    rails (7.1.3.4)
      actioncable (= 7.1.3.4)
      actionpack (= 7.1.3.4)
      activerecord (= 7.1.3.4)
      railties (= 7.1.3.4)
    redis (5.2.0)
      redis-client (>= 0.22.0)
    redis-client (0.22.2)
    rgeo (3.0.1)
    rgeo-geojson (2.1.1)
    sidekiq (7.2.4)
      concurrent-ruby (< 2)
      redis-client (>= 0.19.0)
    sidekiq-cron (1.12.0)
      fugit (~> 1.8)
    turbo-rails (2.0.5)
    view_component (3.12.1)

PLATFORMS
  x86_64-linux

DEPENDENCIES
  activerecord-postgis-adapter (~> 9.0)
  administrate (~> 0.20)
  bootsnap
  devise (~> 4.9)
  google-cloud-storage (~> 1.52)
  pg (~> 1.5)
  puma (~> 6.4)
  pundit
  rack-attack
  rails (~> 7.1.3)
  redis (~> 5.2)
  rgeo-geojson
  sidekiq (~> 7.2)
  sidekiq-cron
  turbo-rails
  view_component

RUBY VERSION
   ruby 3.3.3p89

BUNDLED WITH
   2.5.11
""",
    ),
    "7.1.3.4",
    "Which rails version is locked in admin/Gemfile.lock?",
    "What exact Rails release is the back-office app running on?",
    "admin rails version",
)

_plant(
    read_scene(
        "infra/terraform/envs/prod/gke.tf",
        """\
resource "google_container_cluster" "prod" {
  name     = "tidewater-prod"
  project  = var.project_id
  location = "europe-west4"

  release_channel {
    channel = "REGULAR"
  }

  network    = google_compute_network.main.id
  subnetwork = google_compute_subnetwork.gke.id

  remove_default_node_pool = true
  initial_node_count       = 1

  workload_identity_config {
    workload_pool = "${var.project_id}.svc.id.goog"
  }

  private_cluster_config {
    enable_private_nodes    = true
    enable_private_endpoint = false
    master_ipv4_cidr_block  = "172.16.8.0/28"
  }

  maintenance_policy {
    recurring_window {
      start_time = "2024-01-06T02:00:00Z"
      end_time   = "2024-01-06T06:00:00Z"
      recurrence = "FREQ=WEEKLY;BYDAY=SA"
    }
  }
}

resource "google_container_node_pool" "general" {
  name       = "general"
  cluster    = google_container_cluster.prod.id
  node_count = null

  autoscaling {
    min_node_count = 2
    max_node_count = 8
  }

  node_config {
    machine_type = "e2-standard-8"
    disk_size_gb = 100
    disk_type    = "pd-balanced"
    spot         = false
    labels = {
      pool = "general"
    }
    oauth_scopes = ["https://www.googleapis.com/auth/cloud-platform"]
  }
}

resource "google_container_node_pool" "solver" {
  name    = "solver"
  cluster = google_container_cluster.prod.id

  autoscaling {
    min_node_count = 1
    max_node_count = 6
  }

  node_config {
    machine_type = "c2d-highcpu-32"
    disk_size_gb = 50
    disk_type    = "pd-ssd"
    spot         = true
    labels = {
      pool = "solver"
    }
    taint {
      key    = "tidewater.app/solver"
      value  = "true"
      effect = "NO_SCHEDULE"
    }
    oauth_scopes = ["https://www.googleapis.com/auth/cloud-platform"]
  }
}

resource "google_container_node_pool" "jobs" {
  name    = "jobs"
  cluster = google_container_cluster.prod.id

  autoscaling {
    min_node_count = 0
    max_node_count = 4
  }

  node_config {
    machine_type = "n2-highmem-4"
    disk_size_gb = 100
    spot         = true
    labels = {
      pool = "jobs"
    }
  }
}
""",
    ),
    "c2d-highcpu-32",
    "What machine_type does the solver node pool use in infra/terraform/envs/prod/gke.tf?",
    "What kind of VM do the route-optimisation pods get scheduled on in the production cluster?",
    "solver nodes machine type",
)

_plant(
    read_scene(
        "infra/helm/tidewater/values-prod.yaml",
        """\
global:
  env: prod
  imageRegistry: europe-west4-docker.pkg.dev/tidewater-prod/images
  imagePullPolicy: IfNotPresent

api:
  replicaCount: 4
  image:
    repository: api
    tag: ""   # set by the deploy pipeline (--set api.image.tag=...)
  resources:
    requests:
      cpu: 500m
      memory: 768Mi
    limits:
      cpu: "2"
      memory: 1536Mi
  autoscaling:
    enabled: true
    minReplicas: 4
    maxReplicas: 12
    targetCPUUtilizationPercentage: 65
  env:
    POOL_SIZE: "18"
    READ_POOL_SIZE: "12"
    ERL_MAX_PORTS: "65536"
  podDisruptionBudget:
    minAvailable: 3

obanWorker:
  replicaCount: 3
  resources:
    requests:
      cpu: 250m
      memory: 512Mi
    limits:
      cpu: "1"
      memory: 1Gi

solver:
  replicaCount: 2
  nodeSelector:
    pool: solver
  tolerations:
    - key: tidewater.app/solver
      operator: Equal
      value: "true"
      effect: NoSchedule
  resources:
    requests:
      cpu: "14"
      memory: 6Gi
    limits:
      cpu: "16"
      memory: 10Gi

admin:
  replicaCount: 2
  resources:
    requests:
      cpu: 200m
      memory: 640Mi
    limits:
      cpu: "1"
      memory: 1280Mi
  sidekiq:
    replicaCount: 1
    concurrency: 10

ingress:
  className: gce
  hosts:
    - api.tidewater.app
    - admin.tidewater.app
  managedCertificate: true

serviceMonitor:
  enabled: true
  interval: 30s
""",
    ),
    "1536Mi",
    "What is api.resources.limits.memory in infra/helm/tidewater/values-prod.yaml?",
    "How much RAM is each backend API pod capped at in production before it gets OOM-killed?",
    "api pod memory limit",
)

_plant(
    read_scene(
        "infra/monitoring/alerts/api.rules.yaml",
        """\
groups:
  - name: tidewater-api
    rules:
      - alert: ApiHighErrorRate
        expr: |
          sum(rate(phoenix_http_requests_total{status=~"5..",app="tidewater-api"}[5m]))
            / sum(rate(phoenix_http_requests_total{app="tidewater-api"}[5m])) > 0.02
        for: 10m
        labels:
          severity: page
        annotations:
          summary: "API 5xx ratio above 2% for 10 minutes"

      - alert: ApiLatencyP95High
        expr: |
          histogram_quantile(0.95,
            sum by (le) (rate(phoenix_http_request_duration_seconds_bucket{app="tidewater-api"}[5m]))
          ) > 1.2
        for: 15m
        labels:
          severity: ticket

  - name: tidewater-oban
    rules:
      - alert: AisIngestQueueBacklog
        expr: sum(oban_queue_available_jobs{queue="ais_ingest"}) > 5000
        for: 10m
        labels:
          severity: page
        annotations:
          summary: "AIS position messages are piling up; vessel positions on the map go stale"

      - alert: EtaRecomputeStuck
        expr: increase(oban_job_completed_total{queue="eta_recompute"}[30m]) == 0
        for: 30m
        labels:
          severity: ticket

      - alert: ObanJobsDiscarded
        expr: sum by (worker) (increase(oban_job_discarded_total[1h])) > 20
        for: 5m
        labels:
          severity: ticket

      - alert: ObanProducerDown
        expr: absent(oban_producer_heartbeat{app="tidewater-api"})
        for: 5m
        labels:
          severity: page

  - name: tidewater-crew-socket
    rules:
      - alert: CrewSocketDisconnectStorm
        expr: sum(rate(tidewater_crew_socket_disconnects_total[5m])) > 40
        for: 5m
        labels:
          severity: ticket

      - alert: CrewOutboxRejectsHigh
        expr: sum(rate(tidewater_outbox_rejected_total[15m])) > 1
        for: 20m
        labels:
          severity: ticket
""",
    ),
    "AisIngestQueueBacklog",
    "In infra/monitoring/alerts/api.rules.yaml, which alert watches the ais_ingest Oban queue depth?",
    "What's the name of the page that goes off when incoming ship position messages pile up unprocessed?",
    "alert for ais backlog",
)

_plant(
    read_scene(
        "api/priv/repo/migrations/20240611093012_create_port_zones.exs",
        """\
defmodule Tidewater.Repo.Migrations.CreatePortZones do
  use Ecto.Migration

  def up do
    execute "CREATE EXTENSION IF NOT EXISTS postgis"

    create table(:port_zones, primary_key: false) do
      add :id, :binary_id, primary_key: true
      add :port_id, references(:ports, type: :binary_id, on_delete: :delete_all), null: false
      add :kind, :string, null: false
      add :name, :string, null: false
      add :max_draft_cm, :integer
      add :speed_limit_kn, :decimal, precision: 4, scale: 1
      add :requires_pilot, :boolean, default: false, null: false
      add :valid_from, :utc_datetime_usec
      add :valid_until, :utc_datetime_usec

      timestamps()
    end

    execute "SELECT AddGeometryColumn('port_zones', 'polygon', 4326, 'MULTIPOLYGON', 2)"
    execute "SELECT AddGeometryColumn('port_zones', 'centroid', 4326, 'POINT', 2)"

    create index(:port_zones, [:port_id])
    create index(:port_zones, [:port_id, :kind])
    create unique_index(:port_zones, [:port_id, :name], name: :port_zones_port_id_name_uniq)
    create constraint(:port_zones, :port_zones_kind_check,
             check: "kind IN ('anchorage', 'berth', 'fairway', 'pilot_boarding', 'restricted')"
           )

    execute "CREATE INDEX port_zones_polygon_gix ON port_zones USING GIST (polygon)"
    execute "CREATE INDEX port_zones_centroid_gix ON port_zones USING GIST (centroid)"
    execute "CREATE INDEX port_zones_validity_brin ON port_zones USING BRIN (valid_from, valid_until)"
  end

  def down do
    drop table(:port_zones)
  end
end
""",
    ),
    "port_zones_polygon_gix",
    "What is the GiST index on the polygon column called in the create_port_zones migration?",
    "What's the name of the spatial index we put on the zone outlines around each harbour?",
    "port zones spatial index name",
)

_plant(
    read_scene(
        "infra/redis/redis-prod.conf",
        """\
# Redis for tidewater-prod (self-managed StatefulSet, see infra/helm/redis).
# Holds: rate-limit buckets, Phoenix presence for crew sockets, vessel position cache,
# Sidekiq queues for the admin. Sidekiq keys have no TTL; everything else does.

bind 0.0.0.0
protected-mode yes
port 6379
tcp-backlog 511
timeout 300
tcp-keepalive 60

daemonize no
supervised no
loglevel notice
databases 16

# Persistence: AOF every second plus an hourly snapshot for the backup job.
save 3600 1
appendonly yes
appendfilename "appendonly.aof"
appendfsync everysec
auto-aof-rewrite-percentage 100
auto-aof-rewrite-min-size 256mb
aof-use-rdb-preamble yes

# Memory. Only keys with an expiry may be evicted so the Sidekiq queues survive pressure.
maxmemory 6gb
maxmemory-policy volatile-lfu
maxmemory-samples 10
lfu-log-factor 10
lfu-decay-time 1
lazyfree-lazy-eviction yes
lazyfree-lazy-expire yes

# Replication
replica-serve-stale-data yes
replica-read-only yes
repl-diskless-sync yes
repl-backlog-size 64mb
min-replicas-to-write 1
min-replicas-max-lag 10

# Limits
maxclients 4000
client-output-buffer-limit normal 0 0 0
client-output-buffer-limit replica 512mb 128mb 60
client-output-buffer-limit pubsub 64mb 16mb 60

slowlog-log-slower-than 10000
slowlog-max-len 256
latency-monitor-threshold 50

rename-command FLUSHALL ""
rename-command FLUSHDB ""
rename-command DEBUG ""
""",
    ),
    "volatile-lfu",
    "What maxmemory-policy is set in infra/redis/redis-prod.conf?",
    "When the production cache runs out of memory, how does it decide which keys to throw away?",
    "redis eviction policy",
)

_plant(
    read_scene(
        "ios/TidewaterCrew/Sync/BackgroundScheduler.swift",
        """\
import BackgroundTasks
import Foundation
import OSLog

/// Registers and schedules the crew app's background work.
///
/// The identifiers must also be listed under BGTaskSchedulerPermittedIdentifiers in Info.plist,
/// otherwise `register` traps at launch.
final class BackgroundScheduler {
    enum Job: String, CaseIterable {
        case outboxFlush = "app.tidewater.crew.outbox-flush"
        case chartPrefetch = "app.tidewater.crew.chart-prefetch"
        case certificateCheck = "app.tidewater.crew.cert-check"
        case logUpload = "app.tidewater.crew.log-upload"
    }

    private let logger = Logger(subsystem: "app.tidewater.crew", category: "background")
    private let outbox: OutboxStore
    private let charts: ChartCache

    init(outbox: OutboxStore, charts: ChartCache) {
        self.outbox = outbox
        self.charts = charts
    }

    func registerAll() {
        for job in Job.allCases {
            BGTaskScheduler.shared.register(forTaskWithIdentifier: job.rawValue, using: nil) { bgTask in
                self.handle(job, bgTask)
            }
        }
    }

    func scheduleOutboxFlush(after seconds: TimeInterval = 15 * 60) {
        let request = BGProcessingTaskRequest(identifier: Job.outboxFlush.rawValue)
        request.requiresNetworkConnectivity = true
        request.requiresExternalPower = false
        request.earliestBeginDate = Date(timeIntervalSinceNow: seconds)
        submit(request)
    }

    func scheduleChartPrefetch() {
        let request = BGProcessingTaskRequest(identifier: Job.chartPrefetch.rawValue)
        request.requiresNetworkConnectivity = true
        request.requiresExternalPower = true
        request.earliestBeginDate = Date(timeIntervalSinceNow: 6 * 60 * 60)
        submit(request)
    }

    private func submit(_ request: BGTaskRequest) {
        do {
            try BGTaskScheduler.shared.submit(request)
        } catch {
            logger.error("could not schedule \\(request.identifier): \\(error.localizedDescription)")
        }
    }

    private func handle(_ job: Job, _ bgTask: BGTask) {
        let work = Task.detached(priority: .background) { [outbox, charts] in
            switch job {
            case .outboxFlush: return await outbox.flush(maxBatches: 4)
            case .chartPrefetch: return await charts.prefetchUpcomingLegs()
            case .certificateCheck, .logUpload: return true
            }
        }
        bgTask.expirationHandler = { work.cancel() }
        Task.detached {
            let ok = await work.value
            bgTask.setTaskCompleted(success: ok)
            if job == .outboxFlush { self.scheduleOutboxFlush() }
        }
    }
}
""",
    ),
    "app.tidewater.crew.outbox-flush",
    "What BGTask identifier does BackgroundScheduler.swift register for flushing the outbox?",
    "What's the name of the background job the iPhone app schedules to push queued-up reports to the server?",
    "ios outbox background task id",
)

_plant(
    read_scene(
        "solver/src/cost_model.cc",
        """\
#include "tidewater/cost_model.h"

#include <algorithm>
#include <cmath>

#include "tidewater/units.h"

namespace tidewater::solver {
namespace {

// All costs are in US cents so that OR-Tools can work with int64 arc costs.
constexpr int64_t kFuelCentsPerTonne = 61'500;          // VLSFO, refreshed by the admin weekly
constexpr int64_t kPortDueCentsPerCall = 420'000;
constexpr int64_t kPilotageCentsPerCall = 95'000;
constexpr int64_t kCanalTransitCents = 3'150'000;
constexpr int64_t kCrewOvertimeCentsPerHour = 7'400;
constexpr int64_t kIdleAtAnchorCentsPerHour = 1'200;
constexpr int64_t kLateArrivalPenaltyPerHour = 1850;    // multiplied by the charter's demurrage factor
constexpr int64_t kMissedBerthWindowPenalty = 2'500'000;
constexpr int64_t kDraftViolationPenalty = 50'000'000;  // effectively forbidden
constexpr double kCubicSpeedExponent = 3.0;
constexpr double kMinServiceSpeedKnots = 9.5;
constexpr double kMaxServiceSpeedKnots = 19.0;

}  // namespace

int64_t CostModel::ArcCost(const Leg& leg, const Vessel& vessel) const {
  const double speed = std::clamp(leg.planned_speed_kn, kMinServiceSpeedKnots, kMaxServiceSpeedKnots);
  const double hours = leg.distance_nm / speed;
  const double ratio = speed / vessel.design_speed_kn;
  const double tonnes = vessel.design_fuel_tpd / 24.0 * hours * std::pow(ratio, kCubicSpeedExponent);
  int64_t cost = static_cast<int64_t>(std::llround(tonnes * kFuelCentsPerTonne));
  if (leg.via_canal) cost += kCanalTransitCents;
  return cost;
}

int64_t CostModel::CallCost(const PortCall& call) const {
  int64_t cost = kPortDueCentsPerCall;
  if (call.requires_pilot) cost += kPilotageCentsPerCall;
  return cost;
}

int64_t CostModel::LatenessCost(const PortCall& call, Seconds arrival) const {
  if (arrival <= call.window_end) return 0;
  const double late_hours = ToHours(arrival - call.window_end);
  if (late_hours > call.window_grace_hours) return kMissedBerthWindowPenalty;
  return static_cast<int64_t>(late_hours * kLateArrivalPenaltyPerHour * call.demurrage_factor);
}

int64_t CostModel::WaitingCost(Seconds waited) const {
  return static_cast<int64_t>(ToHours(waited) * kIdleAtAnchorCentsPerHour);
}

int64_t CostModel::OvertimeCost(Seconds overtime) const {
  return static_cast<int64_t>(ToHours(overtime) * kCrewOvertimeCentsPerHour);
}

int64_t CostModel::DraftPenalty(int draft_cm, int limit_cm) const {
  return draft_cm > limit_cm ? kDraftViolationPenalty : 0;
}

}  // namespace tidewater::solver
""",
    ),
    "1850",
    "What is kLateArrivalPenaltyPerHour set to in solver/src/cost_model.cc?",
    "How much does the route optimiser charge per hour when a ship turns up after its berth slot closes?",
    "late arrival penalty per hour",
)


# --- shell commands ------------------------------------------------------------------------------

_plant(
    bash_scene(
        "cd api && mix test test/tidewater/eta/calculator_test.exs",
        """\
Compiling 4 files (.ex)
Generated tidewater app
Running ExUnit with seed: 418203, max_cases: 16
Excluding tags: [:integration, :solver]

.........

  1) test recompute/2 waits at anchor until the tide window opens (Tidewater.Eta.CalculatorTest)
     test/tidewater/eta/calculator_test.exs:142
     Assertion with == failed
     code:  assert eta.arrival == ~U[2024-07-14 06:40:00Z]
     left:  ~U[2024-07-14 04:55:00Z]
     right: ~U[2024-07-14 06:40:00Z]
     stacktrace:
       test/tidewater/eta/calculator_test.exs:151: (test)

.......

  2) test recompute/2 keeps the pilot boarding buffer for restricted fairways (Tidewater.Eta.CalculatorTest)
     test/tidewater/eta/calculator_test.exs:176
     Assertion with == failed
     code:  assert eta.pilot_on_board == ~U[2024-07-14 05:10:00Z]
     left:  ~U[2024-07-14 03:25:00Z]
     right: ~U[2024-07-14 05:10:00Z]
     stacktrace:
       test/tidewater/eta/calculator_test.exs:190: (test)

..........
Finished in 1.3 seconds (0.4s async, 0.9s sync)
28 tests, 2 failures

Randomized with seed 418203
""",
        2,
    ),
    "418203",
    "What seed did the failing mix test run of the ETA calculator tests use?",
    "To replay the Elixir tide-window test failure in the same order, what randomisation number do I pass?",
    "seed of failing eta tests",
)

_plant(
    bash_scene(
        "cd solver/build && ctest --output-on-failure -j1",
        """\
Test project /home/ci/tidewater/solver/build
      Start  1: CostModel.ArcCostScalesCubicallyWithSpeed
 1/18 Test  #1: CostModel.ArcCostScalesCubicallyWithSpeed ..............   Passed    0.01 sec
      Start  2: CostModel.CanalTransitAddsFlatFee
 2/18 Test  #2: CostModel.CanalTransitAddsFlatFee ......................   Passed    0.01 sec
      Start  3: CostModel.LatenessBeyondGraceIsMissedWindow
 3/18 Test  #3: CostModel.LatenessBeyondGraceIsMissedWindow ............   Passed    0.01 sec
      Start  4: DistanceMatrix.UsesSeaRoutesNotGreatCircle
 4/18 Test  #4: DistanceMatrix.UsesSeaRoutesNotGreatCircle .............   Passed    0.37 sec
      Start  5: DistanceMatrix.SymmetricForOpenWater
 5/18 Test  #5: DistanceMatrix.SymmetricForOpenWater ...................   Passed    0.12 sec
      Start  6: TideWindows.MergesOverlappingWindows
 6/18 Test  #6: TideWindows.MergesOverlappingWindows ...................   Passed    0.01 sec
      Start  7: TideWindows.HandlesDateLine
 7/18 Test  #7: TideWindows.HandlesDateLine ............................   Passed    0.02 sec
      Start  8: BerthConstraints.RejectsOverlengthVessel
 8/18 Test  #8: BerthConstraints.RejectsOverlengthVessel ...............   Passed    0.01 sec
      Start  9: BerthConstraints.SharedQuayIsExclusive
 9/18 Test  #9: BerthConstraints.SharedQuayIsExclusive .................   Passed    0.08 sec
      Start 10: RouteFeasibility.VisitsEveryMandatoryCall
10/18 Test #10: RouteFeasibility.VisitsEveryMandatoryCall ..............   Passed    0.44 sec
      Start 11: RouteFeasibility.RespectsDraftLimitAtLowTide
11/18 Test #11: RouteFeasibility.RespectsDraftLimitAtLowTide ...........***Failed    0.52 sec
Running main() from gmock_main.cc
Note: Google Test filter = RouteFeasibility.RespectsDraftLimitAtLowTide
[==========] Running 1 test from 1 test suite.
[----------] 1 test from RouteFeasibility
[ RUN      ] RouteFeasibility.RespectsDraftLimitAtLowTide
/home/ci/tidewater/solver/tests/route_feasibility_test.cc:88: Failure
Expected equality of these values:
  plan.legs[2].arrival_port
    Which is: "NLRTM"
  "BEANR"
[  FAILED  ] RouteFeasibility.RespectsDraftLimitAtLowTide (517 ms)
[----------] 1 test from RouteFeasibility (517 ms total)
[  FAILED  ] 1 test, listed below:
[  FAILED  ] RouteFeasibility.RespectsDraftLimitAtLowTide

      Start 12: RouteFeasibility.HonoursCrewRestHours
12/18 Test #12: RouteFeasibility.HonoursCrewRestHours ..................   Passed    0.31 sec
      Start 13: RouteBuilder.EmptyFleetYieldsEmptyPlan
13/18 Test #13: RouteBuilder.EmptyFleetYieldsEmptyPlan .................   Passed    0.01 sec
      Start 14: RouteBuilder.WarmStartFromPreviousPlan
14/18 Test #14: RouteBuilder.WarmStartFromPreviousPlan .................   Passed    0.66 sec
      Start 15: SearchParams.ParsesYamlProfiles
15/18 Test #15: SearchParams.ParsesYamlProfiles ........................   Passed    0.01 sec
      Start 16: SearchParams.RequestCannotRaiseTimeLimitAboveProfile
16/18 Test #16: SearchParams.RequestCannotRaiseTimeLimitAboveProfile ...   Passed    0.01 sec
      Start 17: GrpcService.RejectsUnknownVessel
17/18 Test #17: GrpcService.RejectsUnknownVessel .......................   Passed    0.05 sec
      Start 18: GrpcService.StreamsProgress
18/18 Test #18: GrpcService.StreamsProgress ............................   Passed    1.02 sec

94% tests passed, 1 tests failed out of 18

Total Test time (real) =   3.71 sec

The following tests FAILED:
         11 - RouteFeasibility.RespectsDraftLimitAtLowTide (Failed)
Errors while running CTest
""",
        8,
    ),
    "RouteFeasibility.RespectsDraftLimitAtLowTide",
    "Which test failed in the solver's ctest --output-on-failure run?",
    "Which C++ route-engine unit test broke, the one about how deep the ship sits when the tide is out?",
    "failing solver test name",
)

_plant(
    bash_scene(
        "terraform -chdir=infra/terraform/envs/prod plan -out=tfplan -lock-timeout=120s",
        """\
google_compute_network.main: Refreshing state... [id=projects/tidewater-prod/global/networks/tw-main]
google_service_account.api: Refreshing state... \
[id=projects/tidewater-prod/serviceAccounts/tw-api@tidewater-prod.iam.gserviceaccount.com]
google_service_account.solver: Refreshing state... \
[id=projects/tidewater-prod/serviceAccounts/tw-solver@tidewater-prod.iam.gserviceaccount.com]
google_compute_subnetwork.gke: Refreshing state... \
[id=projects/tidewater-prod/regions/europe-west4/subnetworks/gke]
google_compute_global_address.private_ip: Refreshing state... \
[id=projects/tidewater-prod/global/addresses/tw-psa]
google_sql_database_instance.main: Refreshing state... [id=tw-pg-main]
google_sql_database.tidewater: Refreshing state... \
[id=projects/tidewater-prod/instances/tw-pg-main/databases/tidewater]
google_storage_bucket.exports: Refreshing state... [id=tidewater-prod-exports]
google_storage_bucket.chart_tiles: Refreshing state... [id=tidewater-prod-chart-tiles]
google_pubsub_topic.ais_positions: Refreshing state... [id=projects/tidewater-prod/topics/ais-positions]
google_pubsub_subscription.ais_positions_api: Refreshing state... \
[id=projects/tidewater-prod/subscriptions/ais-api]
google_container_cluster.prod: Refreshing state... \
[id=projects/tidewater-prod/locations/europe-west4/clusters/tidewater-prod]
google_project_iam_member.api_cloudsql: Refreshing state... \
[id=tidewater-prod/roles/cloudsql.client/serviceAccount:tw-api@tidewater-prod.iam.gserviceaccount.com]
google_project_iam_member.api_pubsub: Refreshing state... \
[id=tidewater-prod/roles/pubsub.subscriber/serviceAccount:tw-api@tidewater-prod.iam.gserviceaccount.com]

Planning failed. Terraform encountered an error while generating this plan.

╷
│ Warning: Value for undeclared variable
│
│ The root module does not declare a variable named "solver_spot" but a value was found in file
│ "prod.auto.tfvars". If you meant to use this value, add a "variable" block to the configuration.
╵
╷
│ Error: Error when reading or editing Container Cluster "tidewater-prod": googleapi: Error 403:
│ Required "container.clusters.get" permission(s) for
│ "projects/tidewater-prod/locations/europe-west4/clusters/tidewater-prod"., forbidden
│
│   with google_container_cluster.prod,
│   on gke.tf line 1, in resource "google_container_cluster" "prod":
│    1: resource "google_container_cluster" "prod" {
│
╵
""",
        1,
    ),
    "container.clusters.get",
    "Which permission did terraform plan for the prod env say the CI account was missing?",
    "When I planned the production infrastructure, which IAM permission on the cluster was denied?",
    "missing gcp permission terraform plan",
)

_plant(
    bash_scene(
        "kubectl -n tidewater-prod describe pod tidewater-api-5f7d9c6b8-k2xvp",
        """\
Name:             tidewater-api-5f7d9c6b8-k2xvp
Namespace:        tidewater-prod
Priority:         0
Service Account:  tw-api
Node:             gke-tidewater-prod-general-3c1e9b7a-q8mz/10.20.0.41
Start Time:       Fri, 12 Jul 2024 09:31:17 +0000
Labels:           app.kubernetes.io/instance=tidewater
                  app.kubernetes.io/name=tidewater-api
                  pod-template-hash=5f7d9c6b8
Status:           Pending
IP:               10.24.3.118
Controlled By:    ReplicaSet/tidewater-api-5f7d9c6b8
Init Containers:
  migrate:
    Image:         europe-west4-docker.pkg.dev/tidewater-prod/images/api:sha-5e81c0a
    Command:       /app/bin/migrate
    State:         Waiting
      Reason:      ImagePullBackOff
Containers:
  api:
    Image:          europe-west4-docker.pkg.dev/tidewater-prod/images/api:sha-5e81c0a
    Port:           4000/TCP
    State:          Waiting
      Reason:       PodInitializing
    Requests:
      cpu:      500m
      memory:   768Mi
  cloud-sql-proxy:
    Image:          gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.11.4
    Port:           5432/TCP
    State:          Waiting
      Reason:       PodInitializing
  otel-agent:
    Image:          otel/opentelemetry-collector-contrib:0.103.1
    State:          Waiting
      Reason:       PodInitializing
Conditions:
  Type              Status
  Initialized       False
  Ready             False
  ContainersReady   False
  PodScheduled      True
Events:
  Type     Reason     Age                  From               Message
  ----     ------     ----                 ----               -------
  Normal   Scheduled  6m12s                default-scheduler  Successfully assigned tidewater-prod/\
tidewater-api-5f7d9c6b8-k2xvp to gke-tidewater-prod-general-3c1e9b7a-q8mz
  Normal   Pulling    4m40s (x4 over 6m11s)  kubelet  Pulling image \
"europe-west4-docker.pkg.dev/tidewater-prod/images/api:sha-5e81c0a"
  Warning  Failed     4m39s (x4 over 6m10s)  kubelet  Failed to pull image \
"europe-west4-docker.pkg.dev/tidewater-prod/images/api:sha-5e81c0a": rpc error: code = NotFound \
desc = failed to pull and unpack image: not found
  Warning  Failed     4m39s (x4 over 6m10s)  kubelet  Error: ErrImagePull
  Normal   BackOff    62s (x21 over 6m9s)    kubelet  Back-off pulling image \
"europe-west4-docker.pkg.dev/tidewater-prod/images/api:sha-5e81c0a"
  Warning  Failed     62s (x21 over 6m9s)    kubelet  Error: ImagePullBackOff
""",
    ),
    "sha-5e81c0a",
    "Which image tag was the new tidewater-api pod failing to pull, per kubectl describe pod?",
    "The new backend pod in production never started because its image was missing: which build tag was it?",
    "api image tag not found",
)

_plant(
    bash_scene(
        "xcodebuild -workspace ios/TidewaterCrew.xcworkspace -scheme TidewaterCrew -configuration Debug "
        "-destination 'platform=iOS Simulator,name=iPhone 15,OS=17.5' build",
        """\
Command line invocation:
    /Applications/Xcode_15.4.app/Contents/Developer/usr/bin/xcodebuild -workspace \
ios/TidewaterCrew.xcworkspace -scheme TidewaterCrew -configuration Debug build

Resolve Package Graph

Resolved source packages:
  Kingfisher: https://github.com/onevcat/Kingfisher.git @ 7.12.0
  swift-protobuf: https://github.com/apple/swift-protobuf.git @ 1.27.0
  Sentry: https://github.com/getsentry/sentry-cocoa.git @ 8.30.0
  MapLibre: https://github.com/maplibre/maplibre-gl-native-distribution @ 6.5.0

ComputePackagePrebuildTargetDependencyGraph

Prepare packages

CreateBuildDescription

SwiftCompile normal arm64 Compiling\\ VoyageTimelineView.swift,\\ LegRow.swift,\\ NoonReportForm.swift \
/Users/ci/tidewater/ios/TidewaterCrew/Voyage/VoyageTimelineView.swift (in target 'TidewaterCrew')

/Users/ci/tidewater/ios/TidewaterCrew/Voyage/LegRow.swift:31:17: warning: 'plannedSpeed' is deprecated: \
use plannedSpeedKnots
            Text(leg.plannedSpeed.formatted())
                     ^
/Users/ci/tidewater/ios/TidewaterCrew/Voyage/VoyageTimelineView.swift:87:26: error: value of type \
'VoyageLeg' has no member 'etaLocal'
                Text(leg.etaLocal, style: .time)
                     ~~~ ^~~~~~~~
/Users/ci/tidewater/ios/TidewaterCrew/Voyage/VoyageTimelineView.swift:87:26: note: did you mean 'etaUtc'?
/Users/ci/tidewater/ios/TidewaterCrew/Voyage/VoyageTimelineView.swift:92:30: error: cannot infer \
contextual base in reference to member 'berthWindowStart'
                    .help(.berthWindowStart)
                          ~^~~~~~~~~~~~~~~~
/Users/ci/tidewater/ios/TidewaterCrew/Reports/NoonReportForm.swift:45:13: warning: variable 'draft' was \
never mutated; consider changing to 'let' constant

** BUILD FAILED **


The following build commands failed:
        SwiftCompile normal arm64 /Users/ci/tidewater/ios/TidewaterCrew/Voyage/VoyageTimelineView.swift \
(in target 'TidewaterCrew' from project 'TidewaterCrew')
        SwiftEmitModule normal arm64 Emitting\\ module\\ for\\ TidewaterCrew \
(in target 'TidewaterCrew' from project 'TidewaterCrew')
(2 failures)
""",
        65,
    ),
    "etaLocal",
    "Which member did xcodebuild say type VoyageLeg doesn't have, in VoyageTimelineView.swift?",
    "When the iPhone app stopped compiling, which property of the voyage leg model was reported missing?",
    "ios build missing property",
)

_plant(
    bash_scene(
        "cd admin && bin/rails db:migrate",
        """\
== 20240611120455 CreateChartererContacts: migrating ===========================
-- create_table(:charterer_contacts, {:id=>:uuid})
   -> 0.0213s
-- add_index(:charterer_contacts, [:charterer_id, :email], {:unique=>true})
   -> 0.0071s
== 20240611120455 CreateChartererContacts: migrated (0.0286s) ==================

== 20240618110204 AddChartererRefToVoyages: migrating ==========================
-- add_reference(:voyages, :charterer, \
{:type=>:uuid, :foreign_key=>true, :index=>{:algorithm=>:concurrently}})
   -> 0.0412s
== 20240618110204 AddChartererRefToVoyages: migrated (0.0413s) =================

== 20240625083310 AddDemurrageFactorToCharters: migrating ======================
-- add_column(:charters, :demurrage_factor, :decimal, {:precision=>5, :scale=>2, :default=>"1.0"})
   -> 0.0049s
== 20240625083310 AddDemurrageFactorToCharters: migrated (0.0050s) =============

== 20240702141530 BackfillBunkerSurveyLocations: migrating =====================
-- execute("UPDATE bunker_surveys SET location = ST_SetSRID(ST_MakePoint(lon, lat), 4326)")
bin/rails aborted!
StandardError: An error has occurred, all later migrations canceled: (StandardError)

PG::UndefinedColumn: ERROR:  column "lon" does not exist
LINE 1: UPDATE bunker_surveys SET location = ST_SetSRID(ST_MakePoint(lon, lat), 4326)
                                                                     ^
HINT:  Perhaps you meant to reference the column "bunker_surveys.lng".
/app/db/migrate/20240702141530_backfill_bunker_survey_locations.rb:6:in `up'

Caused by:
ActiveRecord::StatementInvalid: PG::UndefinedColumn: ERROR:  column "lon" does not exist \
(ActiveRecord::StatementInvalid)
/app/db/migrate/20240702141530_backfill_bunker_survey_locations.rb:6:in `up'

Caused by:
PG::UndefinedColumn: ERROR:  column "lon" does not exist (PG::UndefinedColumn)
/app/db/migrate/20240702141530_backfill_bunker_survey_locations.rb:6:in `up'
Tasks: TOP => db:migrate
(See full trace by running task with --trace)
""",
        1,
    ),
    "20240702141530",
    "Which migration version aborted bin/rails db:migrate in the admin app?",
    "The back-office schema update died halfway: what's the timestamp of the migration that broke?",
    "failed admin migration number",
)

_plant(
    bash_scene(
        "redis-cli -h 10.42.16.5 -p 6379 INFO memory",
        """\
# Memory
used_memory:2297874816
used_memory_human:2.14G
used_memory_rss:2480406528
used_memory_rss_human:2.31G
used_memory_peak:3983584256
used_memory_peak_human:3.71G
used_memory_peak_perc:57.68%
used_memory_overhead:118734912
used_memory_startup:946512
used_memory_dataset:2179139904
used_memory_dataset_perc:94.87%
allocator_allocated:2298931200
allocator_active:2367684608
allocator_resident:2453602304
total_system_memory:16766365696
total_system_memory_human:15.61G
used_memory_lua:31744
used_memory_lua_human:31.00K
used_memory_scripts:1344
used_memory_scripts_human:1.31K
number_of_cached_scripts:3
maxmemory:6442450944
maxmemory_human:6.00G
allocator_frag_ratio:1.03
allocator_frag_bytes:68753408
allocator_rss_ratio:1.04
allocator_rss_bytes:85917696
rss_overhead_ratio:1.01
rss_overhead_bytes:26804224
mem_fragmentation_ratio:1.08
mem_fragmentation_bytes:182573168
mem_not_counted_for_evict:0
mem_replication_backlog:67108864
mem_clients_slaves:20512
mem_clients_normal:4109312
mem_aof_buffer:0
mem_allocator:jemalloc-5.3.0
active_defrag_running:0
lazyfree_pending_objects:0
lazyfreed_objects:18234
""",
    ),
    "3.71G",
    "What was used_memory_peak_human in the redis-cli INFO memory output?",
    "What's the most memory the production cache has ever used since it last restarted?",
    "redis peak memory",
)

_plant(
    bash_scene(
        'psql "$DATABASE_URL" -c "SELECT postgis_full_version();" '
        '-c "SELECT extname, extversion FROM pg_extension ORDER BY 1;" -c "SHOW server_version;"',
        """\
                                         postgis_full_version
---------------------------------------------------------------------------------------------------
 POSTGIS="3.4.2 c19ce56" [EXTENSION] PGSQL="150" GEOS="3.12.1-CAPI-1.18.1" \
PROJ="9.3.1 NETWORK_ENABLED=OFF
 URL_ENDPOINT=https://cdn.proj.org USER_WRITABLE_DIRECTORY=/tmp/proj DATABASE_PATH=/usr/share/proj/proj.db"
 LIBXML="2.9.14" LIBJSON="0.16" LIBPROTOBUF="1.4.1" WAGYU="0.5.0 (Internal)" TOPOLOGY
(1 row)

      extname       | extversion
--------------------+------------
 btree_gist         | 1.7
 citext             | 1.6
 fuzzystrmatch      | 1.2
 pg_stat_statements | 1.10
 pg_trgm            | 1.6
 pgcrypto           | 1.3
 plpgsql            | 1.0
 postgis            | 3.4.2
 postgis_topology   | 3.4.2
 uuid-ossp          | 1.1
(10 rows)

 server_version
----------------
 15.7
(1 row)

""",
    ),
    "3.4.2",
    "What postgis version did SELECT postgis_full_version() report on the main database?",
    "Which release of the geospatial extension is installed in our Postgres?",
    "postgis version db",
)

_plant(
    bash_scene(
        "gcloud container clusters describe tidewater-prod --region europe-west4 --format=yaml",
        """\
addonsConfig:
  gcePersistentDiskCsiDriverConfig:
    enabled: true
  horizontalPodAutoscaling: {}
  httpLoadBalancing: {}
  networkPolicyConfig:
    disabled: true
autopilot: {}
clusterIpv4Cidr: 10.24.0.0/14
createTime: '2023-03-14T10:22:51+00:00'
currentMasterVersion: 1.29.6-gke.1038001
currentNodeCount: 9
currentNodeVersion: 1.29.5-gke.1091002
databaseEncryption:
  state: DECRYPTED
endpoint: 34.90.118.207
id: 7c2f5b19d04e4e43a1b9c0f6e8d2a7b35d1e0c4f9a8b7c6d5e4f3a2b1c0d9e8f
initialClusterVersion: 1.26.2-gke.1000
location: europe-west4
locations:
- europe-west4-a
- europe-west4-b
- europe-west4-c
loggingService: logging.googleapis.com/kubernetes
monitoringService: monitoring.googleapis.com/kubernetes
name: tidewater-prod
network: tw-main
nodePools:
- autoscaling:
    enabled: true
    maxNodeCount: 8
    minNodeCount: 2
  config:
    machineType: e2-standard-8
  name: general
  version: 1.29.5-gke.1091002
- autoscaling:
    enabled: true
    maxNodeCount: 6
    minNodeCount: 1
  config:
    spot: true
  name: solver
  version: 1.29.5-gke.1091002
- autoscaling:
    enabled: true
    maxNodeCount: 4
  config:
    machineType: n2-highmem-4
    spot: true
  name: jobs
  version: 1.28.9-gke.1289000
releaseChannel:
  channel: REGULAR
selfLink: https://container.googleapis.com/v1/projects/tidewater-prod/locations/europe-west4/\
clusters/tidewater-prod
servicesIpv4Cidr: 10.28.0.0/20
status: RUNNING
subnetwork: gke
""",
    ),
    "1.29.6-gke.1038001",
    "What's currentMasterVersion in the gcloud clusters describe output for tidewater-prod?",
    "Which Kubernetes control-plane version is the production cluster running right now?",
    "gke master version",
)

_plant(
    bash_scene(
        "kubectl -n tidewater-prod get pods -o wide",
        """\
NAME                                 READY   STATUS             RESTARTS        AGE     IP            NODE
tidewater-admin-7b9c4d5f6-2kqzt      1/1     Running            0               2d4h    10.24.1.37    \
gke-tidewater-prod-general-3c1e9b7a-q8mz
tidewater-admin-7b9c4d5f6-v8ljw      1/1     Running            0               2d4h    10.24.2.91    \
gke-tidewater-prod-general-3c1e9b7a-7fkd
tidewater-api-6c8d7f9b5-4hpxw        3/3     Running            0               19h     10.24.1.52    \
gke-tidewater-prod-general-3c1e9b7a-q8mz
tidewater-api-6c8d7f9b5-9tmvz        3/3     Running            0               19h     10.24.2.104   \
gke-tidewater-prod-general-3c1e9b7a-7fkd
tidewater-api-6c8d7f9b5-fz2qr        3/3     Running            1 (17h ago)     19h     10.24.3.66    \
gke-tidewater-prod-general-3c1e9b7a-m2wx
tidewater-api-6c8d7f9b5-xw7nb        3/3     Running            0               19h     10.24.3.71    \
gke-tidewater-prod-general-3c1e9b7a-m2wx
tidewater-oban-54f9d8c7b-6rjkd       2/2     Running            0               19h     10.24.4.12    \
gke-tidewater-prod-jobs-91d2f0c4-tt6b
tidewater-oban-54f9d8c7b-l9swc       2/2     Running            0               19h     10.24.4.19    \
gke-tidewater-prod-jobs-91d2f0c4-tt6b
tidewater-oban-54f9d8c7b-qc5xn       2/2     Running            2 (3h11m ago)   19h     10.24.5.8     \
gke-tidewater-prod-jobs-91d2f0c4-hh3p
tidewater-sidekiq-58c6b9d47-jd4mn    1/1     Running            0               2d4h    10.24.2.95    \
gke-tidewater-prod-general-3c1e9b7a-7fkd
tidewater-solver-6d4f9b7c8-8w2ns     1/1     Running            0               6d      10.24.6.4     \
gke-tidewater-prod-solver-a7e3b2d1-0pzc
tidewater-solver-6d4f9b7c8-zt5kq     0/1     CrashLoopBackOff   14 (2m31s ago)  6d      10.24.7.3     \
gke-tidewater-prod-solver-a7e3b2d1-xv9r
tidewater-redis-0                    2/2     Running            0               12d     10.24.1.9     \
gke-tidewater-prod-general-3c1e9b7a-q8mz
tidewater-redis-1                    2/2     Running            0               12d     10.24.2.8     \
gke-tidewater-prod-general-3c1e9b7a-7fkd
tidewater-redis-2                    2/2     Running            0               12d     10.24.3.5     \
gke-tidewater-prod-general-3c1e9b7a-m2wx
tidewater-tide-sync-28679520-wq6xz   0/1     Completed          0               47m     10.24.4.33    \
gke-tidewater-prod-jobs-91d2f0c4-tt6b
tidewater-tide-sync-28679580-b2hcm   1/1     Running            0               2m      10.24.4.41    \
gke-tidewater-prod-jobs-91d2f0c4-tt6b
tidewater-otel-collector-0           1/1     Running            0               12d     10.24.1.11    \
gke-tidewater-prod-general-3c1e9b7a-q8mz
tidewater-otel-collector-1           1/1     Running            0               12d     10.24.2.12    \
gke-tidewater-prod-general-3c1e9b7a-7fkd
tidewater-blackbox-exporter-5d7c-nk2p 1/1    Running            0               30d     10.24.3.14    \
gke-tidewater-prod-general-3c1e9b7a-m2wx
""",
    ),
    "tidewater-solver-6d4f9b7c8-zt5kq",
    "In kubectl get pods for tidewater-prod, which solver pod had the big restart count?",
    "Which of the production route-engine pods kept crash-looping?",
    "crashlooping solver pod name",
)

_plant(
    bash_scene(
        "promtool check rules infra/monitoring/alerts/*.rules.yaml",
        """\
Checking infra/monitoring/alerts/api.rules.yaml
  SUCCESS: 8 rules found

Checking infra/monitoring/alerts/blackbox.rules.yaml
  SUCCESS: 3 rules found

Checking infra/monitoring/alerts/gke.rules.yaml
  SUCCESS: 7 rules found

Checking infra/monitoring/alerts/postgres.rules.yaml
  SUCCESS: 9 rules found

Checking infra/monitoring/alerts/redis.rules.yaml
  FAILED:
infra/monitoring/alerts/redis.rules.yaml: 41:15: group "tidewater-redis", rule 4, \
"RedisEvictionsSpiking": could not parse expression: 1:52: parse error: unexpected right parenthesis ')'

Checking infra/monitoring/alerts/sidekiq.rules.yaml
  SUCCESS: 4 rules found

Checking infra/monitoring/alerts/solver.rules.yaml
  SUCCESS: 5 rules found

Checking infra/monitoring/alerts/certs.rules.yaml
  SUCCESS: 2 rules found

Checking infra/monitoring/alerts/ais.rules.yaml
  SUCCESS: 3 rules found

Checking infra/monitoring/alerts/slo.rules.yaml
  Duplicate rule detected: "ApiAvailabilitySLOBurn"
  SUCCESS: 6 rules found

""",
        1,
    ),
    "RedisEvictionsSpiking",
    "Which rule did promtool check rules fail to parse?",
    "When validating the Prometheus alert files, which cache alert had a broken expression?",
    "alert rule that failed to parse",
)

_plant(
    bash_scene(
        "./solver/build/tw_solve --scenario solver/scenarios/northsea_feeder_w28.json --profile small_voyage "
        "--time-limit 30s",
        """\
[2024-07-11 14:02:10.331] [info] tw_solve 2.8.1 (16 threads, seed 1)
[2024-07-11 14:02:10.332] [info] profile small_voyage: PARALLEL_CHEAPEST_INSERTION + GREEDY_DESCENT
[2024-07-11 14:02:10.348] [info] scenario northsea_feeder_w28: 4 vessels, 19 port calls, 6 berth windows
[2024-07-11 14:02:10.349] [info] vessels: MV Skagen Trader (IMO 9412358), MV Humber Star (IMO 9387104),
[2024-07-11 14:02:10.349] [info]          MV Elbe Courier (IMO 9501776), MV Tyne Runner (IMO 9290632)
[2024-07-11 14:02:10.402] [info] distance matrix: 23x23 sea-route distances in 53 ms (cache hit 91%)
[2024-07-11 14:02:10.418] [info] tide windows: 38 windows from 7 stations (NLRTM, BEANR, DEHAM, GBHUL, GBTYN)
[2024-07-11 14:02:10.419] [info] draft limits: BEANR 1450 cm, DEHAM 1370 cm, GBHUL 1080 cm
[2024-07-11 14:02:10.611] [info] first solution: cost 58,913,420 (feasible) after 192 ms
[2024-07-11 14:02:11.204] [info] improvement: cost 54,770,105 (-7.03%) at 0.79 s
[2024-07-11 14:02:12.880] [info] improvement: cost 53,118,962 (-3.01%) at 2.46 s
[2024-07-11 14:02:13.051] [info] local optimum reached at 2.63 s, stopping (GREEDY_DESCENT)
[2024-07-11 14:02:13.052] [info] plan summary:
[2024-07-11 14:02:13.052] [info]   MV Skagen Trader   6 calls   512.3 nm  12.4 kn  late 0.0 h  61.8 t
[2024-07-11 14:02:13.052] [info]   MV Humber Star     4 calls   377.9 nm  11.8 kn  late 1.5 h  42.0 t
[2024-07-11 14:02:13.052] [info]   MV Elbe Courier    5 calls   468.1 nm  12.9 kn  late 0.0 h  57.3 t
[2024-07-11 14:02:13.052] [info]   MV Tyne Runner     4 calls   476.3 nm  12.1 kn  late 0.0 h  55.6 t
[2024-07-11 14:02:13.053] [info]   total             19 calls  1834.6 nm           late 1.5 h  216.7 t
[2024-07-11 14:02:13.053] [info] dropped calls: none
[2024-07-11 14:02:13.053] [info] waiting at anchor: 7.25 h total (GBHUL 4.0 h, DEHAM 3.25 h)
[2024-07-11 14:02:13.061] [info] wrote plan to out/northsea_feeder_w28.plan.json (19 legs)
[2024-07-11 14:02:13.061] [info] objective 53,118,962 in 2.73 s wall
""",
    ),
    "1834.6",
    "What total distance did tw_solve report for the northsea_feeder_w28 scenario?",
    "In that North Sea feeder trial run of the route engine, how many nautical miles did the plan total?",
    "total nm feeder scenario",
)

_plant(
    bash_scene(
        "git log --oneline -25 -- api/lib/tidewater/eta",
        """\
e4a90d7 eta: expose confidence band in the crew socket payload
3c7f21b eta: log the tide station used per leg
a1d5e83 eta: recompute only vessels whose AIS position moved more than 0.5 nm
9f02c6e eta: cap anchorage wait at 36 h before flagging the voyage
b71e04c eta: use tide window end, not start, when the vessel is draft-limited
58de3a0 eta: move speed-over-ground smoothing into its own module
0c6b9f4 eta: treat pilot boarding as a fixed 45 min buffer for restricted fairways
d83a1e2 eta: handle ports without tide stations (assume always open)
7f4e0b9 eta: round published times to 5 minutes for the crew app
26a1cc8 eta: fix DST bug in local berth window conversion
ea95b37 eta: add EtaRecomputeFanout worker instead of per-vessel cron
41c8d2f eta: read current from Tidewater.Tides instead of the admiralty client
b09e7a6 eta: weather routing hook (disabled by default)
6d2f5c1 eta: use geodesic distance for the final approach leg
f3b7a90 eta: include canal transit queue time
92ce4d8 eta: store previous ETA for change notifications
1ab3f6e eta: notify charterer when ETA slips more than 2 h
c57e209 eta: telemetry spans around recompute
8e0d4b3 eta: extract Calculator from the old EtaService
355af71 eta: first cut of tide-aware arrival estimates
0f9e6c2 eta: seed data for Rotterdam and Antwerp tide windows
ad4b817 eta: schema for vessel_etas
79e3c0d eta: placeholder module and supervisor wiring
c1e8a5f eta: ADR 0007 for arrival estimation
2b6f0d9 eta: initial directory
""",
    ),
    "b71e04c",
    "In git log for api/lib/tidewater/eta, which commit switched draft-limited vessels to the window end?",
    "What's the short hash of the fix to arrival estimates for deep-laden ships waiting on the tide?",
    "tide window eta fix commit",
)

_plant(
    bash_scene(
        "cd api && mix hex.outdated",
        """\
Dependency              Current   Latest    Status
bandit                  1.5.5     1.5.7     Update possible
bypass                  2.1.0     2.1.0     Up-to-date
credo                   1.7.7     1.7.7     Up-to-date
dialyxir                1.4.5     1.4.5     Up-to-date
ecto_sql                3.11.3    3.12.0    Update possible
ex_machina              2.8.0     2.8.0     Up-to-date
finch                   0.18.0    0.19.0    Update not possible
geo_postgis             3.6.0     3.7.0     Update possible
google_api_pub_sub      0.38.0    0.39.1    Update not possible
grpc                    0.8.1     0.9.0     Update not possible
hammer                  6.2.1     6.2.1     Up-to-date
jason                   1.4.1     1.4.4     Update possible
mox                     1.1.0     1.2.0     Update possible
nimble_csv              1.2.0     1.2.0     Up-to-date
oban                    2.17.12   2.18.3    Update possible
opentelemetry_ecto      1.2.0     1.2.0     Up-to-date
opentelemetry_exporter  1.7.0     1.8.0     Update possible
opentelemetry_phoenix   1.2.0     2.0.0     Update not possible
phoenix                 1.7.14    1.7.14    Up-to-date
phoenix_ecto            4.6.2     4.6.2     Up-to-date
postgrex                0.18.0    0.19.1    Update possible
prom_ex                 1.9.0     1.10.0    Update possible
protobuf                0.12.0    0.13.0    Update not possible
redix                   1.5.1     1.5.2     Update possible
req                     0.5.2     0.5.6     Update possible
sentry                  10.6.2    10.7.0    Update possible
swoosh                  1.16.9    1.17.0    Update possible
tz                      0.27.1    0.28.1    Update not possible

Run `mix hex.outdated APP` to see requirements for a specific dependency.

To view the diffs in each available update, visit:
https://hex.pm/l/7Hq2x
""",
        1,
    ),
    "0.19.1",
    "What Latest version did mix hex.outdated list for postgrex?",
    "What's the newest release of the Postgres driver the Elixir backend could be upgraded to?",
    "latest postgres driver version",
)

_plant(
    bash_scene(
        "docker compose -f docker-compose.dev.yml up",
        """\
[+] Running 9/9
 ✔ Network tidewater_default        Created                                                   0.1s
 ✔ Volume "tidewater_pgdata"        Created                                                   0.0s
 ✔ Volume "tidewater_redisdata"     Created                                                   0.0s
 ✔ Container tidewater-redis-1      Created                                                   0.2s
 ✔ Container tidewater-postgis-1    Created                                                   0.2s
 ✔ Container tidewater-mailpit-1    Created                                                   0.2s
 ✔ Container tidewater-otel-1       Created                                                   0.2s
 ✔ Container tidewater-solver-1     Created                                                   0.3s
 ✔ Container tidewater-tileserver-1 Created                                                   0.2s
Attaching to mailpit-1, otel-1, postgis-1, redis-1, solver-1, tileserver-1
redis-1       | 1:C 12 Jul 2024 08:14:02.117 * oO0OoO0OoO0Oo Redis is starting oO0OoO0OoO0Oo
redis-1       | 1:M 12 Jul 2024 08:14:02.119 * Running mode=standalone, port=6379.
redis-1       | 1:M 12 Jul 2024 08:14:02.120 * Ready to accept connections tcp
mailpit-1     | time="2024/07/12 08:14:02" level=info msg="[smtpd] starting on [::]:1025 (no encryption)"
mailpit-1     | time="2024/07/12 08:14:02" level=info msg="[http] accessible via http://localhost:8025/"
otel-1        | 2024-07-12T08:14:02.402Z info otlpreceiver Starting GRPC server {"endpoint": "0.0.0.0:4317"}
otel-1        | 2024-07-12T08:14:02.403Z info otlpreceiver Starting HTTP server {"endpoint": "0.0.0.0:4318"}
otel-1        | 2024-07-12T08:14:02.405Z info prometheusexporter listening {"endpoint": "0.0.0.0:8889"}
solver-1      | [2024-07-12 08:14:02.655] [info] tw_solver_server 2.8.1 listening on 0.0.0.0:50051
solver-1      | [2024-07-12 08:14:02.656] [info] metrics exposed on 0.0.0.0:9464
tileserver-1  | Starting tileserver-gl v4.11.0 on port 8080
tileserver-1  | Serving charts_northsea.mbtiles as /data/charts
Error response from daemon: driver failed programming external connectivity on endpoint \
tidewater-postgis-1 (9b1c3e7a52d0f4e8): Bind for 0.0.0.0:5433 failed: port is already allocated
""",
        1,
    ),
    "5433",
    "Which host port did docker compose up fail to bind for the postgis container?",
    "Starting the local dev stack, which port was already taken so the database container couldn't come up?",
    "port already allocated local db",
)

_plant(
    bash_scene(
        "gcloud sql instances describe tw-pg-main --project tidewater-prod",
        """\
backendType: SECOND_GEN
connectionName: tidewater-prod:europe-west4:tw-pg-main
createTime: '2023-03-14T11:05:42.318Z'
databaseInstalledVersion: POSTGRES_15_7
databaseVersion: POSTGRES_15
gceZone: europe-west4-b
secondaryGceZone: europe-west4-c
instanceType: CLOUD_SQL_INSTANCE
ipAddresses:
- ipAddress: 10.61.0.3
  type: PRIVATE
maintenanceVersion: POSTGRES_15_7.R20240514.00_12
name: tw-pg-main
project: tidewater-prod
region: europe-west4
replicaNames:
- tw-pg-replica-1
serviceAccountEmailAddress: p318445072911-k3v9qe@gcp-sa-cloud-sql.iam.gserviceaccount.com
settings:
  activationPolicy: ALWAYS
  availabilityType: REGIONAL
  backupConfiguration:
    backupRetentionSettings:
      retainedBackups: 14
      retentionUnit: COUNT
    enabled: true
    pointInTimeRecoveryEnabled: true
    startTime: '01:00'
    transactionLogRetentionDays: 7
  dataDiskSizeGb: '500'
  dataDiskType: PD_SSD
  databaseFlags:
  - name: max_connections
    value: '400'
  - name: cloudsql.enable_pg_cron
    value: 'on'
  ipConfiguration:
    ipv4Enabled: false
    privateNetwork: projects/tidewater-prod/global/networks/tw-main
    requireSsl: true
  maintenanceWindow:
    day: 6
    hour: 3
  tier: db-custom-16-61440
state: RUNNABLE
""",
    ),
    "tidewater-prod:europe-west4:tw-pg-main",
    "What connectionName did gcloud sql instances describe show for tw-pg-main?",
    "What instance connection string does the database proxy sidecar need to reach production Postgres?",
    "cloud sql connection name",
)


# --- greps ---------------------------------------------------------------------------------------

_plant(
    _grep_under(
        "timeout",
        "api/lib",
        """\
tidewater/ais/client.ex:14:  @connect_timeout 4_000
tidewater/ais/client.ex:15:  @receive_timeout 17_500
tidewater/ais/client.ex:41:      receive_timeout: @receive_timeout,
tidewater/ais/client.ex:42:      connect_options: [timeout: @connect_timeout],
tidewater/ais/stream_consumer.ex:22:  # reconnect with backoff when the relay hits its idle timeout
tidewater/ais/stream_consumer.ex:58:        ack_timeout: 60_000,
tidewater/tides/admiralty_client.ex:11:  @timeout :timer.seconds(12)
tidewater/tides/admiralty_client.ex:37:  Req.get(url, receive_timeout: @timeout, retry: :transient)
tidewater/weather/metocean_client.ex:19:      receive_timeout: 25_000,
tidewater/weather/metocean_client.ex:20:      pool_timeout: 2_000,
tidewater/solver/client.ex:28:  # the deadline is the search time limit plus a margin for serialising the plan
tidewater/solver/client.ex:33:    timeout = Keyword.get(opts, :timeout, config()[:deadline_ms])
tidewater/solver/client.ex:34:    Tidewater.Solver.Stub.plan(channel(), request, timeout: timeout + 5_000)
tidewater/sanctions/list_client.ex:16:  @receive_timeout 45_000
tidewater/sanctions/list_client.ex:29:      receive_timeout: @receive_timeout,
tidewater/eta/calculator.ex:61:  # no timeout here: the calculator is pure, the worker owns the job timeout
tidewater/workers/eta_recompute.ex:19:  def timeout(_job), do: :timer.seconds(90)
tidewater/workers/ais_snapshot_sweep.ex:12:  def timeout(_job), do: :timer.minutes(4)
tidewater/workers/weekly_fuel_report.ex:15:  def timeout(_job), do: :timer.minutes(20)
tidewater/workers/customs_manifest_submit.ex:23:  def timeout(_job), do: :timer.seconds(150)
tidewater/workers/sanctions_list_sync.ex:14:  def timeout(_job), do: :timer.minutes(6)
tidewater/reports/fuel_report.ex:88:    Repo.transaction(fn -> build(rows) end, timeout: 120_000)
tidewater/vessels.ex:203:    |> Repo.all(timeout: 10_000)
tidewater/positions.ex:144:    |> ReadRepo.all(timeout: 30_000)
tidewater_web/channels/crew_socket.ex:9:  # heartbeat_timeout is set at runtime; the app pings every 25 s
tidewater_web/controllers/upload_controller.ex:27:  |> read_body(length: 20_000_000, read_timeout: 60_000)
tidewater_web/plugs/rate_limit.ex:18:  handle(check_rate(crew_id), conn, timeout_ms: 60_000)
""",
    ),
    "17_500",
    "What receive_timeout does the AIS client module in api/lib use?",
    "How long does the backend wait on the ship-position feed provider before an HTTP call is abandoned?",
    "ais client timeout",
)

_plant(
    _grep_under(
        "port",
        "infra/helm/tidewater/templates",
        """\
api-deployment.yaml:48:            - name: PORT
api-deployment.yaml:49:              value: "4000"
api-deployment.yaml:62:          ports:
api-deployment.yaml:64:              containerPort: 4000
api-deployment.yaml:66:              containerPort: 9568
api-deployment.yaml:91:              port: http
api-deployment.yaml:99:              port: http
api-deployment.yaml:118:            - "--port=5432"
api-service.yaml:11:    - name: http
api-service.yaml:12:      port: 80
api-service.yaml:13:      targetPort: http
admin-deployment.yaml:41:            - name: PORT
admin-deployment.yaml:42:              value: "3000"
admin-deployment.yaml:55:          ports:
admin-deployment.yaml:57:              containerPort: 3000
admin-deployment.yaml:77:              port: http
admin-service.yaml:12:      port: 80
admin-service.yaml:13:      targetPort: http
solver-deployment.yaml:39:            - "--grpc_port=50071"
solver-deployment.yaml:40:            - "--metrics_port=9464"
solver-deployment.yaml:52:          ports:
solver-deployment.yaml:54:              containerPort: 50071
solver-deployment.yaml:56:              containerPort: 9464
solver-deployment.yaml:71:              port: grpc
solver-service.yaml:12:      port: 9090
solver-service.yaml:13:      targetPort: grpc
oban-deployment.yaml:60:              containerPort: 9568
redis-statefulset.yaml:47:              containerPort: 6379
redis-statefulset.yaml:66:              containerPort: 9121
servicemonitor.yaml:15:    - port: metrics
servicemonitor.yaml:22:    - port: solver-metrics
networkpolicy.yaml:31:        - port: 5432
networkpolicy.yaml:33:        - port: 6379
networkpolicy.yaml:35:        - port: 9090
""",
    ),
    "50071",
    "What containerPort does the solver's grpc port get in the Helm chart templates?",
    "Inside its pod in the cluster, which port is the route engine's RPC server actually listening on?",
    "solver grpc container port",
)

_plant(
    _grep_under(
        "std::chrono::",
        "solver/src",
        """\
grpc_service.cc:19:constexpr auto kProgressInterval = std::chrono::milliseconds(500);
grpc_service.cc:20:constexpr auto kWatchdogGrace = std::chrono::milliseconds(8750);
grpc_service.cc:21:constexpr auto kMaxRequestTimeLimit = std::chrono::seconds(600);
grpc_service.cc:64:  const auto started = std::chrono::steady_clock::now();
grpc_service.cc:71:  std::chrono::duration_cast<std::chrono::milliseconds>(limit + kWatchdogGrace).count();
grpc_service.cc:103:    std::this_thread::sleep_for(kProgressInterval);
grpc_service.cc:118:  const auto elapsed = std::chrono::steady_clock::now() - started;
main_server.cc:27:constexpr auto kShutdownDeadline = std::chrono::seconds(25);
main_server.cc:28:constexpr auto kKeepaliveTime = std::chrono::seconds(20);
main_server.cc:29:constexpr auto kKeepaliveTimeout = std::chrono::seconds(5);
main_server.cc:88:  server->Shutdown(std::chrono::system_clock::now() + kShutdownDeadline);
distance_matrix.cc:16:constexpr auto kCacheTtl = std::chrono::hours(12);
distance_matrix.cc:44:  if (std::chrono::steady_clock::now() - entry.built_at > kCacheTtl) {
distance_matrix.cc:97:  const auto t0 = std::chrono::steady_clock::now();
distance_matrix.cc:131:  spdlog::info("distance matrix: {}x{} in {} ms", n, n, ElapsedMs(t0));
tide_windows.cc:12:constexpr auto kMinUsableWindow = std::chrono::minutes(40);
tide_windows.cc:13:constexpr auto kStationSampling = std::chrono::minutes(10);
tide_windows.cc:58:  const auto span = std::chrono::duration_cast<std::chrono::minutes>(w.end - w.start);
search_params.cc:22:constexpr auto kDefaultTimeLimit = std::chrono::seconds(20);
search_params.cc:23:constexpr auto kDefaultLnsTimeLimit = std::chrono::milliseconds(250);
search_params.cc:71:      absl::FromChrono(std::chrono::milliseconds(profile.lns_time_limit_ms)));
route_builder.cc:35:constexpr auto kWarmStartMaxAge = std::chrono::hours(6);
route_builder.cc:140:  if (std::chrono::system_clock::now() - previous.created_at < kWarmStartMaxAge) {
metrics.cc:18:constexpr auto kScrapeStaleAfter = std::chrono::seconds(90);
""",
    ),
    "8750",
    "What is kWatchdogGrace set to in the solver's gRPC service source?",
    "How much extra time does the route engine let a search overrun its limit before the watchdog kills it?",
    "solver watchdog grace ms",
)

_plant(
    _grep_under(
        "use Oban.Worker",
        "api/lib/tidewater/workers",
        """\
ais_position_ingest.ex:2:  use Oban.Worker, queue: :ais_ingest, max_attempts: 3
ais_snapshot_sweep.ex:2:  use Oban.Worker, queue: :default, unique: [period: 240]
berth_window_reconcile.ex:2:  use Oban.Worker, queue: :default, unique: [period: 3_600]
bunker_survey_import.ex:2:  use Oban.Worker, queue: :manifests, max_attempts: 5
cargo_manifest_export.ex:2:  use Oban.Worker, queue: :manifests, unique: [period: 900]
charterer_eta_notice.ex:2:  use Oban.Worker, queue: :notifications, unique: [period: 1_800]
crew_certificate_expiry.ex:2:  use Oban.Worker, queue: :default, unique: [period: 82_800]
crew_push_notification.ex:2:  use Oban.Worker, queue: :notifications, max_attempts: 8
customs_manifest_submit.ex:2:  use Oban.Worker, queue: :manifests, unique: [period: 5_400]
eta_recompute.ex:2:  use Oban.Worker, queue: :eta_recompute, unique: [period: 120, fields: [:args]]
eta_recompute_fanout.ex:2:  use Oban.Worker, queue: :eta_recompute, unique: [period: 600]
fuel_price_refresh.ex:2:  use Oban.Worker, queue: :default, unique: [period: 43_200]
geofence_alert.ex:2:  use Oban.Worker, queue: :notifications, max_attempts: 4
noon_report_ingest.ex:2:  use Oban.Worker, queue: :default, max_attempts: 10
plan_request.ex:2:  use Oban.Worker, queue: :default, unique: [period: 60, fields: [:args]]
port_call_closeout.ex:2:  use Oban.Worker, queue: :default, unique: [period: 7_200]
purge_stale_positions.ex:2:  use Oban.Worker, queue: :default, unique: [period: 82_800]
sanctions_list_sync.ex:2:  use Oban.Worker, queue: :default, unique: [period: 19_800]
solver_result_apply.ex:2:  use Oban.Worker, queue: :default, max_attempts: 6
tide_table_refresh.ex:2:  use Oban.Worker, queue: :default, unique: [period: 3_000]
vessel_document_ocr.ex:2:  use Oban.Worker, queue: :manifests, max_attempts: 3, priority: 2
weekly_fuel_report.ex:2:  use Oban.Worker, queue: :default, unique: [period: 86_400]
""",
    ),
    "5_400",
    "What unique period does customs_manifest_submit.ex set on its use Oban.Worker line?",
    "How long does the job that files manifests with customs refuse to enqueue a duplicate of itself?",
    "customs manifest job dedupe window",
)

_plant(
    _grep_under(
        "image:",
        "infra/helm",
        """\
tidewater/templates/api-deployment.yaml:33:  image: {{ include "tidewater.image" .Values.api }}
tidewater/templates/api-deployment.yaml:109:  image: gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.11.4
tidewater/templates/api-deployment.yaml:131:          image: otel/opentelemetry-collector-contrib:0.103.1
tidewater/templates/oban-deployment.yaml:30:  image: {{ include "tidewater.image" .Values.api }}
tidewater/templates/oban-deployment.yaml:77:  image: gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.11.4
tidewater/templates/admin-deployment.yaml:29:  image: {{ include "tidewater.image" .Values.admin }}
tidewater/templates/sidekiq-deployment.yaml:27:  image: {{ include "tidewater.image" .Values.admin }}
tidewater/templates/solver-deployment.yaml:31:  image: {{ include "tidewater.image" .Values.solver }}
tidewater/templates/migrate-job.yaml:24:  image: {{ include "tidewater.image" .Values.api }}
tidewater/templates/tide-sync-cronjob.yaml:26:              image: curlimages/curl:8.8.0
tidewater/templates/redis-statefulset.yaml:38:          image: redis:7.2.5-alpine
tidewater/templates/redis-statefulset.yaml:61:          image: oliver006/redis_exporter:v1.62.0
tidewater/templates/tileserver-deployment.yaml:25:          image: maptiler/tileserver-gl:v4.11.0
tidewater/values.yaml:12:  image:
tidewater/values.yaml:31:  image:
tidewater/values.yaml:48:  image:
monitoring/values.yaml:18:    image: quay.io/prometheuscommunity/postgres-exporter:v0.15.0
monitoring/values.yaml:34:    image: prom/blackbox-exporter:v0.25.0
monitoring/values.yaml:52:    image: quay.io/prometheus/pushgateway:v1.9.0
monitoring/values.yaml:71:    image: registry.k8s.io/kube-state-metrics/kube-state-metrics:v2.12.0
monitoring/values.yaml:90:    image: quay.io/prometheus-operator/prometheus-config-reloader:v0.75.0
monitoring/templates/alertmanager.yaml:21:          image: quay.io/prometheus/alertmanager:v0.27.0
monitoring/templates/grafana.yaml:30:          image: grafana/grafana:11.1.0
""",
    ),
    "v1.62.0",
    "Which redis_exporter image tag do the helm charts under infra/helm deploy?",
    "What version of the sidecar that exposes cache metrics to Prometheus are we running?",
    "redis exporter version",
)

_plant(
    _grep_under(
        "ST_DWithin",
        "api/lib",
        """\
tidewater/positions/arrival_detector.ex:12:  # ST_DWithin on geography: distances are in metres, not degrees
tidewater/positions/arrival_detector.ex:31:    fragment("ST_DWithin(?, ?, 2778)", p.pos, anchorage.polygon)
tidewater/positions/arrival_detector.ex:47:    fragment("ST_DWithin(?, ?, 450)", p.pos, berth.polygon)
tidewater/positions/departure_detector.ex:26:  where: not fragment("ST_DWithin(?, ?, 3704)", p.pos, z.area)
tidewater/positions/geofence.ex:19:  @default_buffer_m 1_000
tidewater/positions/geofence.ex:58:  where: fragment("ST_DWithin(?, ?, ?)", p.position, g.boundary, ^buf)
tidewater/positions/proximity.ex:22:      where: fragment("ST_DWithin(?, ?, 9260)", a.position, b.position),
tidewater/positions/proximity.ex:40:      # close-quarters warning: 0.3 nm
tidewater/positions/proximity.ex:41:      where: fragment("ST_DWithin(?, ?, 556)", a.position, b.position),
tidewater/ports.ex:84:  # nearest ports within 10 nm, then within 50 nm as a fallback
tidewater/ports.ex:88:      where: fragment("ST_DWithin(?, ?, 18520)", p.location, ^point),
tidewater/ports.ex:102:      where: fragment("ST_DWithin(?, ?, 92600)", p.location, ^point),
tidewater/pilotage.ex:34:      where: fragment("ST_DWithin(?, ?, 1852)", v.position, pb.point),
tidewater/bunkering.ex:51:      where: fragment("ST_DWithin(?, ?, 740)", v.position, barge.position),
tidewater/sanctions/screening.ex:67:  where: fragment("ST_DWithin(?, ?, 22224)", p.position, area.boundary),
tidewater/eta/approach.ex:25:  # within 20 nm the approach leg uses the pilot route, not the great circle
tidewater/eta/approach.ex:29:      where: fragment("ST_DWithin(?, ?, 37040)", v.position, port.location),
tidewater_web/controllers/vessel_controller.ex:77:  where: fragment("ST_DWithin(?, ?, ?)", v.pos, ^pt, ^r)
tidewater_web/controllers/port_controller.ex:50:  # radius_m is clamped to 200 km for the public endpoint
tidewater_web/controllers/port_controller.ex:54:  where: fragment("ST_DWithin(?, ?, ?)", p.location, ^pt, ^r)
tidewater_web/live/fleet_map_live.ex:112:  where: fragment("ST_DWithin(?, ?, ?)", v.position, ^c, ^r)
""",
    ),
    "2778",
    "What distance does the anchorage arrival query in arrival_detector.ex pass to ST_DWithin?",
    "How close, in metres, must a ship get to the anchorage zone before the backend counts it as arrived?",
    "anchorage arrival radius",
)

_plant(
    _grep_under(
        "runbook_url",
        "infra/monitoring/alerts",
        """\
ais.rules.yaml:13:          runbook_url: https://runbooks.tidewater.app/ais/relay-disconnected
ais.rules.yaml:27:          runbook_url: https://runbooks.tidewater.app/ais/position-gap
ais.rules.yaml:41:          runbook_url: https://runbooks.tidewater.app/ais/duplicate-mmsi
blackbox.rules.yaml:12:          runbook_url: https://runbooks.tidewater.app/edge/probe-failing
blackbox.rules.yaml:24:          runbook_url: https://runbooks.tidewater.app/edge/tls-handshake-slow
certs.rules.yaml:11:          runbook_url: https://runbooks.tidewater.app/edge/cert-expiry
gke.rules.yaml:12:          runbook_url: https://runbooks.tidewater.app/gke/node-not-ready
gke.rules.yaml:25:          runbook_url: https://runbooks.tidewater.app/gke/pod-crashloop
gke.rules.yaml:38:          runbook_url: https://runbooks.tidewater.app/gke/pvc-filling
gke.rules.yaml:51:          runbook_url: https://runbooks.tidewater.app/gke/spot-preemptions
postgres.rules.yaml:12:          runbook_url: https://runbooks.tidewater.app/postgres/pg-connections-saturated
postgres.rules.yaml:25:          runbook_url: https://runbooks.tidewater.app/postgres/pg-replica-lag
postgres.rules.yaml:38:          runbook_url: https://runbooks.tidewater.app/postgres/pg-disk-filling
postgres.rules.yaml:51:          runbook_url: https://runbooks.tidewater.app/postgres/pg-long-running-tx
postgres.rules.yaml:64:          runbook_url: https://runbooks.tidewater.app/postgres/pg-deadlocks
postgres.rules.yaml:77:          runbook_url: https://runbooks.tidewater.app/postgres/postgis-slow-queries
postgres.rules.yaml:90:          runbook_url: https://runbooks.tidewater.app/postgres/pg-backup-missed
redis.rules.yaml:12:          runbook_url: https://runbooks.tidewater.app/redis/memory-near-max
redis.rules.yaml:25:          runbook_url: https://runbooks.tidewater.app/redis/replica-link-down
redis.rules.yaml:44:          runbook_url: https://runbooks.tidewater.app/redis/evictions
sidekiq.rules.yaml:12:          runbook_url: https://runbooks.tidewater.app/admin/sidekiq-queue-latency
sidekiq.rules.yaml:25:          runbook_url: https://runbooks.tidewater.app/admin/sidekiq-dead-set
solver.rules.yaml:12:          runbook_url: https://runbooks.tidewater.app/solver/plan-latency
solver.rules.yaml:25:          runbook_url: https://runbooks.tidewater.app/solver/infeasible-rate
solver.rules.yaml:38:          runbook_url: https://runbooks.tidewater.app/solver/watchdog-kills
slo.rules.yaml:19:          runbook_url: https://runbooks.tidewater.app/slo/api-availability
slo.rules.yaml:37:          runbook_url: https://runbooks.tidewater.app/slo/eta-freshness
""",
    ),
    "pg-replica-lag",
    "Which runbook_url do the alert rules link for Postgres replication lag?",
    "Where's the on-call write-up for when the read-only copy of the database falls behind?",
    "replica lag runbook link",
)

_plant(
    _grep_under(
        "ENV",
        "admin/config",
        """\
application.rb:24:    config.time_zone = ENV.fetch("TZ", "UTC")
application.rb:31:    config.x.api_base_url = ENV.fetch("TW_API_INTERNAL_URL", "http://localhost:4000")
cable.yml:10:  url: <%= ENV.fetch("CABLE_REDIS_URL", "redis://localhost:6379/1") %>
database.yml:5:  pool: <%= ENV.fetch("RAILS_MAX_THREADS", 5) %>
database.yml:28:    database: tidewater_admin_test<%= ENV['TEST_ENV_NUMBER'] %>
database.yml:29:    host: <%= ENV.fetch("PGHOST", "localhost") %>
database.yml:37:    password: <%= ENV["ADMIN_DB_PASSWORD"] %>
database.yml:45:    password: <%= ENV["ADMIN_DB_RO_PASSWORD"] %>
database.yml:54:    password: <%= ENV["ADMIN_DB_PASSWORD"] %>
database.yml:55:    pool: <%= ENV.fetch("RAILS_MAX_THREADS", 8) %>
database.yml:63:    password: <%= ENV["ADMIN_DB_RO_PASSWORD"] %>
environments/production.rb:40:  config.cache_store = :redis_cache_store, { url: ENV.fetch("CACHE_REDIS_URL") }
environments/production.rb:52:  config.action_mailer.default_url_options = { host: ENV.fetch("ADMIN_HOST") }
environments/production.rb:71:  config.log_level = ENV.fetch("RAILS_LOG_LEVEL", "info")
initializers/chart_tiles.rb:3:  bucket: ENV.fetch("TW_CHART_TILE_BUCKET", "tidewater-dev-chart-tiles"),
initializers/devise.rb:12:  config.secret_key = ENV["DEVISE_SECRET_KEY"] if Rails.env.production?
initializers/exports.rb:2:  config.x.exports_bucket = ENV.fetch("TW_ADMIN_EXPORT_BUCKET")
initializers/exports.rb:3:  config.x.exports_prefix = ENV.fetch("TW_ADMIN_EXPORT_PREFIX", "admin/")
initializers/exports.rb:4:  config.x.exports_ttl_days = ENV.fetch("TW_EXPORT_TTL_DAYS", 30).to_i
initializers/rack_attack.rb:5:  Rack::Attack.cache.store = RedisCacheStore.new(url: ENV["CACHE_REDIS_URL"])
initializers/sentry.rb:2:  config.dsn = ENV["SENTRY_DSN"]
initializers/sentry.rb:3:  config.environment = ENV.fetch("TW_DEPLOY_ENV", "development")
initializers/sidekiq.rb:1:redis_url = ENV.fetch("SIDEKIQ_REDIS_URL", "redis://localhost:6379/2")
initializers/storage.rb:4:  project_id: ENV.fetch("GCP_PROJECT", "tidewater-dev"),
initializers/storage.rb:5:  credentials: ENV["GOOGLE_APPLICATION_CREDENTIALS"],
initializers/tidewater_api.rb:6:  token: ENV.fetch("TW_API_SERVICE_TOKEN"),
puma.rb:7:threads_count = ENV.fetch("RAILS_MAX_THREADS", 5)
puma.rb:12:port ENV.fetch("PORT", 3000)
puma.rb:15:workers ENV.fetch("WEB_CONCURRENCY", 2)
""",
    ),
    "TW_ADMIN_EXPORT_BUCKET",
    "Which ENV variable does admin/config/initializers/exports.rb read for the exports bucket?",
    "What environment variable tells the back office which storage bucket to drop CSV exports into?",
    "admin export bucket env var",
)

_plant(
    _grep_under(
        "static let .*Key",
        "ios/TidewaterCrew",
        """\
Auth/SessionStore.swift:9:    static let accessTokenKey = "tw.crewSessionToken"
Auth/SessionStore.swift:10:    static let refreshTokenKey = "tw.crewRefreshToken"
Auth/SessionStore.swift:11:    static let deviceIdKey = "tw.deviceId"
Charts/ChartCache.swift:14:    static let downloadedRegionsKey = "tw.chartRegionsDownloaded"
Charts/ChartCache.swift:15:    static let cacheVersionKey = "tw.chartCacheVersion"
Notifications/PushRegistrar.swift:8:    static let pushTokenUploadedKey = "tw.pushTokenUploaded"
Onboarding/OnboardingFlow.swift:6:    static let completedKey = "tw.onboardingCompleted"
Reports/NoonReportDraftStore.swift:7:    static let draftKey = "tw.lastNoonReportDraft.v2"
Reports/BunkerSurveyDraftStore.swift:7:    static let draftKey = "tw.bunkerSurveyDraft"
Settings/DefaultsKeys.swift:4:    static let selectedVesselKey = "tw.selectedVesselIMO"
Settings/DefaultsKeys.swift:5:    static let preferredUnitsKey = "tw.preferredUnits"
Settings/DefaultsKeys.swift:6:    static let timeZoneModeKey = "tw.timeZoneMode"
Settings/DefaultsKeys.swift:7:    static let lastSeenReleaseNotesKey = "tw.lastSeenReleaseNotes"
Settings/DefaultsKeys.swift:8:    static let mapStyleKey = "tw.mapStyle"
Sync/OutboxStore.swift:12:    static let sequenceKey = "tw.outboxSequence"
Sync/OutboxStore.swift:13:    static let poisonedItemsKey = "tw.outboxPoisoned"
Sync/SyncCoordinator.swift:18:    static let lastSyncCursorKey = "tw.lastSyncCursor.v3"
Sync/SyncCoordinator.swift:19:    static let legacySyncCursorKey = "tw.lastSyncCursor.v2"
Sync/SyncCoordinator.swift:20:    static let lastFullSyncKey = "tw.lastFullSyncAt"
Sync/SyncCoordinator.swift:21:    static let schemaVersionKey = "tw.syncSchemaVersion"
Telemetry/Analytics.swift:11:    static let optOutKey = "tw.analyticsOptOut"
Voyage/VoyageStore.swift:9:    static let activeVoyageKey = "tw.activeVoyageId"
""",
    ),
    "tw.lastSyncCursor.v3",
    "What string is lastSyncCursorKey in the crew app's SyncCoordinator.swift?",
    "Under what defaults name does the iPhone app remember how far its last sync got?",
    "ios sync cursor key",
)

_plant(
    _grep_under(
        "redis://",
        "admin",
        """\
.env.development.example:7:CABLE_REDIS_URL=redis://localhost:6379/1
.env.development.example:8:SIDEKIQ_REDIS_URL=redis://localhost:6379/2
.env.development.example:9:CACHE_REDIS_URL=redis://localhost:6379/3
.env.production.example:11:CABLE_REDIS_URL=redis://tw-redis-cable.internal:6379/1
.env.production.example:12:SIDEKIQ_REDIS_URL=redis://tw-redis-admin.internal:6380/2
.env.production.example:13:CACHE_REDIS_URL=redis://tw-redis-cache.internal:6379/3
.env.staging.example:11:CABLE_REDIS_URL=redis://tw-redis.staging.internal:6379/1
.env.staging.example:12:SIDEKIQ_REDIS_URL=redis://tw-redis.staging.internal:6379/2
.env.staging.example:13:CACHE_REDIS_URL=redis://tw-redis.staging.internal:6379/3
config/cable.yml:10:  url: <%= ENV.fetch("CABLE_REDIS_URL", "redis://localhost:6379/1") %>
config/cable.yml:14:  url: redis://localhost:6379/15
config/initializers/sidekiq.rb:1:redis_url = ENV.fetch("SIDEKIQ_REDIS_URL", "redis://localhost:6379/2")
docker-compose.yml:22:      REDIS_URL: redis://redis:6379/0
docker-compose.yml:23:      SIDEKIQ_REDIS_URL: redis://redis:6379/2
docker-compose.yml:24:      CABLE_REDIS_URL: redis://redis:6379/1
docker-compose.yml:25:      CACHE_REDIS_URL: redis://redis:6379/3
spec/support/redis.rb:4:  url = ENV.fetch("TEST_REDIS_URL", "redis://localhost:6379/14")
spec/support/sidekiq.rb:6:  Sidekiq.configure_client { |c| c.redis = { url: "redis://localhost:6379/13" } }
README.md:58:Sidekiq needs its own Redis in production (redis://<host>:6380, noeviction policy),
README.md:59:since the shared one evicts keys under pressure. Locally redis://localhost:6379/2 is fine.
""",
    ),
    "tw-redis-admin.internal",
    "What host does SIDEKIQ_REDIS_URL point at in the admin's production env example?",
    "In production, which Redis server do the back office's background workers queue their jobs on?",
    "admin sidekiq redis host",
)

_plant(
    _grep_under(
        "tier|disk_size|availability_type",
        "infra/terraform",
        """\
envs/dev/cloudsql.tf:7:    tier              = "db-custom-2-7680"
envs/dev/cloudsql.tf:8:    availability_type = "ZONAL"
envs/dev/cloudsql.tf:9:    disk_size         = 50
envs/dev/gke.tf:41:    disk_size_gb = 50
envs/dev/memorystore.tf:4:  tier           = "BASIC"
envs/staging/cloudsql.tf:7:    tier              = "db-custom-8-30720"
envs/staging/cloudsql.tf:8:    availability_type = "ZONAL"
envs/staging/cloudsql.tf:9:    disk_size         = 200
envs/staging/cloudsql.tf:34:    tier              = "db-custom-4-15360"
envs/staging/gke.tf:44:    disk_size_gb = 100
envs/staging/gke.tf:63:    disk_size_gb = 50
envs/staging/memorystore.tf:4:  tier           = "BASIC"
envs/prod/cloudsql.tf:7:    tier              = "db-custom-16-61440"
envs/prod/cloudsql.tf:8:    availability_type = "REGIONAL"
envs/prod/cloudsql.tf:9:    disk_size         = 500
envs/prod/cloudsql.tf:36:    tier              = "db-custom-8-32768"
envs/prod/cloudsql.tf:37:    availability_type = "ZONAL"
envs/prod/gke.tf:47:    disk_size_gb = 100
envs/prod/gke.tf:68:    disk_size_gb = 50
envs/prod/gke.tf:94:    disk_size_gb = 100
envs/prod/memorystore.tf:4:  tier           = "STANDARD_HA"
modules/cloudsql/main.tf:18:    tier              = var.tier
modules/cloudsql/main.tf:19:    availability_type = var.availability_type
modules/cloudsql/main.tf:20:    disk_size         = var.disk_size
modules/cloudsql/variables.tf:14:variable "tier" {
modules/cloudsql/variables.tf:20:variable "availability_type" {
modules/cloudsql/variables.tf:26:variable "disk_size" {
""",
    ),
    "db-custom-8-30720",
    "What Cloud SQL tier does infra/terraform/envs/staging/cloudsql.tf give the primary instance?",
    "What size of managed Postgres machine does the pre-production environment run on?",
    "staging db tier",
)

_plant(
    _grep_under(
        "TODO|FIXME",
        "solver",
        """\
Dockerfile:14:# TODO(TW-1990): drop the source build once OR-Tools ships arm64 wheels for our base image
bench/fleet_replan_bench.cc:22:  // TODO(TW-2140): load the 60-vessel fixture from GCS instead of the repo
bench/scenario_bench.cc:9:// TODO: add the Baltic winter scenarios (ice class constraints)
include/tidewater/berth_constraints.h:31:  // TODO(TW-2088): model shared quays with more than two berths
include/tidewater/cost_model.h:17:  // FIXME(TW-2302): take the demurrage factor from the charter
proto/solver.proto:48:  // TODO(TW-2317): deprecate time_limit_s in favour of a Duration
src/berth_constraints.cc:77:  // TODO: pilot availability windows (needs the pilotage API)
src/distance_matrix.cc:58:  // TODO(TW-2155): cache misses spike after deploys, persist the cache
src/distance_matrix.cc:103:  // FIXME: Kiel canal legs use the great circle when the canal is closed
src/grpc_service.cc:88:  // TODO(TW-2226): stream partial plans, not only progress
src/main_server.cc:54:  // TODO: read search.yaml from a ConfigMap mount instead of baking it in
src/route_builder.cc:61:  // TODO(TW-2049): warm start ignores vessels added since the previous plan
src/route_builder.cc:119:  // FIXME(TW-2270): dropped optional calls are not reported back to the API
src/search_params.cc:38:  // TODO: validate that the profile names in requests exist before solving
src/tide_windows.cc:41:  // FIXME(TW-2291): windows crossing 00:00 UTC counted twice at local-time stations
src/tide_windows.cc:96:  // TODO(TW-2183): interpolate between station samples instead of stepping
src/tide_windows.cc:130:  // TODO: handle stations that publish only high/low water, no curve
tests/route_feasibility_test.cc:12:// TODO(TW-2291): re-enable the midnight case once fixed
tests/route_feasibility_test.cc:80:  // FIXME: this fixture's Antwerp draft limit is from 2022
tests/tide_windows_test.cc:63:  // TODO: property test against the admiralty sample files
tests/grpc_service_test.cc:27:  // TODO(TW-2226): assert on partial plans once streamed
""",
    ),
    "TW-2291",
    "Which ticket does the FIXME about tide windows crossing midnight in the solver reference?",
    "What's the issue number for the route-engine bug where tidal windows spanning midnight count twice?",
    "ticket for tide window midnight bug",
)

FACTS: list[PlantedFact] = _FACTS


# --- distractors ---------------------------------------------------------------------------------
# Look-alike outputs of the same project: other modules, other environments, passing runs, other
# greps and logs. Each template draws its values from `rng`; `_acceptable` drops any scene that
# would repeat a fact's answer, path or command.


def _hex(rng: random.Random, n: int) -> str:
    return "".join(rng.choice("0123456789abcdef") for _ in range(n))


def _pod_suffix(rng: random.Random) -> str:
    return f"{_hex(rng, 9)}-{''.join(rng.choice('bcdfghjklmnpqrstvwxz2456789') for _ in range(5))}"


def _clock(rng: random.Random) -> str:
    return f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}"


_EX_TESTS = {
    "vessels": (
        "list_vessels/1 filters by flag state",
        "get_vessel!/1 raises for an unknown IMO",
        "update_vessel/2 rejects a negative deadweight",
        "create_vessel/1 normalises the call sign",
        "vessel_by_mmsi/1 ignores decommissioned hulls",
    ),
    "ports": (
        "nearest/2 prefers ports with an open berth",
        "search/1 matches UN/LOCODE case-insensitively",
        "timezone/1 uses the port's IANA zone",
        "closures/2 merges overlapping notices",
    ),
    "voyages": (
        "start_voyage/2 requires a charter",
        "close_voyage/1 computes the fuel balance",
        "add_port_call/3 keeps calls ordered by planned arrival",
        "cancel_port_call/2 notifies the charterer",
        "voyage_summary/1 sums distances per leg",
    ),
    "noon_reports": (
        "ingest/2 accepts a report from the crew app",
        "ingest/2 rejects a report older than the last one",
        "ingest/2 converts fuel from m3 to tonnes",
        "anomalies/1 flags a speed above the hull's maximum",
    ),
    "geofence": (
        "inside?/2 handles polygons crossing the antimeridian",
        "events/2 emits an entry once per visit",
        "events/2 debounces positions jittering on the boundary",
        "buffer/2 expands the zone in metres",
    ),
    "sanctions": (
        "screen/1 matches vessel aliases",
        "screen/1 ignores delisted entries",
        "sync/0 keeps the previous list when the feed is empty",
    ),
    "crew": (
        "roster/1 lists crew on board today",
        "certificates_expiring/1 warns 30 days ahead",
        "assign/3 refuses a crew member without a valid medical",
        "sign_off/2 closes the contract",
    ),
    "bunkering": (
        "plan_bunkering/2 picks the cheapest port on the route",
        "survey/2 records the barge delivery note",
        "survey/2 rejects a negative delivered quantity",
    ),
}

_EX_FILES = {
    "vessels": "test/tidewater/vessels_test.exs",
    "ports": "test/tidewater/ports_test.exs",
    "voyages": "test/tidewater/voyages_test.exs",
    "noon_reports": "test/tidewater/noon_reports_test.exs",
    "geofence": "test/tidewater/positions/geofence_test.exs",
    "sanctions": "test/tidewater/sanctions/screening_test.exs",
    "crew": "test/tidewater/crew_test.exs",
    "bunkering": "test/tidewater/bunkering_test.exs",
}


def _d_mix_test_pass(rng: random.Random) -> Scene:
    areas = rng.sample(sorted(_EX_TESTS), rng.randint(3, 4))
    seed = rng.randint(10_000, 999_999)
    lines = [
        f"Compiling {rng.randint(1, 9)} files (.ex)",
        "Generated tidewater app",
        f"Running ExUnit with seed: {seed}, max_cases: 1",
        "Excluding tags: [:integration, :solver]",
        "",
    ]
    count = 0
    for area in areas:
        module = "".join(part.capitalize() for part in area.split("_"))
        lines.append(f"Tidewater.{module}Test [{_EX_FILES[area]}]")
        for name in _EX_TESTS[area]:
            count += 1
            ms = rng.randint(1, 900) / 10
            lines.append(f"  * test {name} ({ms}ms) [L#{rng.randint(10, 400)}]")
        lines.append("")
    lines += [
        f"Finished in {rng.randint(4, 40) / 10} seconds ({rng.randint(1, 9) / 10}s async, "
        f"{rng.randint(1, 30) / 10}s sync)",
        f"{count} tests, 0 failures",
        "",
        f"Randomized with seed {seed}",
    ]
    files = " ".join(_EX_FILES[a] for a in areas)
    return bash_scene(f"cd api && mix test --trace {files}", "\n".join(lines))


_SPECS = {
    "spec/models/vessel_spec.rb": (
        "Vessel",
        (
            "validates the IMO check digit",
            "requires a flag state",
            "scopes active vessels",
            "exposes the current voyage",
            "formats the deadweight in tonnes",
        ),
    ),
    "spec/models/charter_spec.rb": (
        "Charter",
        (
            "requires a charterer",
            "defaults the demurrage factor",
            "rejects overlapping charters for one vessel",
            "computes laytime in hours",
        ),
    ),
    "spec/requests/admin/port_calls_spec.rb": (
        "Admin::PortCalls",
        (
            "GET /admin/port_calls lists upcoming calls",
            "GET /admin/port_calls filters by port",
            "PATCH /admin/port_calls/:id moves the berth window",
            "PATCH /admin/port_calls/:id refuses a window in the past",
            "DELETE /admin/port_calls/:id needs the dispatcher role",
        ),
    ),
    "spec/requests/admin/exports_spec.rb": (
        "Admin::Exports",
        (
            "POST /admin/exports enqueues a fuel export",
            "GET /admin/exports/:id redirects to a signed URL",
            "GET /admin/exports/:id 404s once the export expired",
        ),
    ),
    "spec/jobs/sanctions_refresh_job_spec.rb": (
        "SanctionsRefreshJob",
        (
            "stores the new list",
            "keeps the old list when the download fails",
            "reports matches to the compliance inbox",
        ),
    ),
    "spec/policies/voyage_policy_spec.rb": (
        "VoyagePolicy",
        (
            "lets dispatchers edit open voyages",
            "lets viewers read only",
            "forbids edits to closed voyages",
            "lets compliance officers see sanctioned voyages",
        ),
    ),
}


def _d_rspec_pass(rng: random.Random) -> Scene:
    files = rng.sample(sorted(_SPECS), rng.randint(3, 5))
    lines = [f"Randomized with seed {rng.randint(1000, 65535)}", ""]
    count = 0
    for path in files:
        described, examples = _SPECS[path]
        lines.append(described)
        for example in rng.sample(examples, len(examples)):
            count += 1
            lines.append(f"  {example}")
        lines.append("")
    lines += [
        f"Finished in {rng.randint(8, 90) / 10} seconds "
        f"(files took {rng.randint(15, 60) / 10} seconds to load)",
        f"{count} examples, 0 failures",
    ]
    return bash_scene(
        f"cd admin && bundle exec rspec {' '.join(files)} --format documentation", "\n".join(lines)
    )


_GTESTS = (
    "CostModel.ArcCostIsZeroForZeroDistance",
    "CostModel.PilotageOnlyWhenRequired",
    "CostModel.WaitingCostIsLinear",
    "DistanceMatrix.CachesPerScenario",
    "DistanceMatrix.AvoidsClosedCanals",
    "TideWindows.EmptyStationYieldsAlwaysOpen",
    "TideWindows.RespectsMinimumWindow",
    "TideWindows.SortsWindows",
    "BerthConstraints.AllowsAdjacentWindows",
    "BerthConstraints.ReservedBerthBlocksOthers",
    "RouteFeasibility.DropsOptionalCallsWhenLate",
    "RouteFeasibility.KeepsMandatoryFirstCall",
    "RouteFeasibility.FuelNeverNegative",
    "RouteBuilder.SingleVesselSingleCall",
    "RouteBuilder.DeterministicWithFixedSeed",
    "SearchParams.UnknownProfileFallsBackToDefaults",
    "SearchParams.ParsesDurations",
    "GrpcService.RejectsEmptyFleet",
    "GrpcService.CancelsOnClientDisconnect",
    "Metrics.ExportsSolveHistogram",
)


def _d_ctest_pass(rng: random.Random) -> Scene:
    tests = rng.sample(_GTESTS, rng.randint(10, 16))
    n = len(tests)
    lines = ["Test project /home/ci/tidewater/solver/build"]
    total = 0.0
    for i, name in enumerate(tests, 1):
        secs = rng.randint(1, 120) / 100
        total += secs
        lines.append(f"      Start {i:2d}: {name}")
        dots = "." * max(3, 56 - len(name))
        lines.append(f"{i:2d}/{n} Test #{i:2d}: {name} {dots}   Passed    {secs:.2f} sec")
    lines += [
        "",
        f"100% tests passed, 0 tests failed out of {n}",
        "",
        f"Total Test time (real) =   {total + rng.randint(5, 60) / 100:.2f} sec",
    ]
    return bash_scene(f"cd solver/build && ctest --output-on-failure -j{rng.randint(2, 8)}", "\n".join(lines))


_SWIFT_TESTS = {
    "OutboxStoreTests": (
        "testEnqueueAssignsSequence",
        "testFlushStopsOnServerError",
        "testPoisonedItemIsSkipped",
    ),
    "NoonReportFormTests": ("testRequiresPosition", "testFuelConvertsUnits", "testDraftIsSavedOnBackground"),
    "ChartCacheTests": ("testEvictsOldestRegion", "testRegionKeyIncludesZoom", "testCorruptTileIsRefetched"),
    "SessionStoreTests": (
        "testTokenStoredInKeychain",
        "testRefreshBeforeExpiry",
        "testSignOutClearsDefaults",
    ),
    "VoyageStoreTests": ("testActiveVoyageRestored", "testLegOrderFollowsPlan", "testPortTimeZones"),
    "SyncCoordinatorTests": (
        "testCursorAdvancesAfterPage",
        "testConflictPrefersServer",
        "testOfflineQueuesChanges",
    ),
}


def _d_xcode_test_pass(rng: random.Random) -> Scene:
    classes = rng.sample(sorted(_SWIFT_TESTS), rng.randint(3, 5))
    stamp = f"2024-07-{rng.randint(1, 28):02d} {_clock(rng)}.{rng.randint(100, 999)}"
    lines = [f"Test Suite 'All tests' started at {stamp}.", "Test Suite 'TidewaterCrewTests.xctest' started."]
    count = 0
    for cls in classes:
        lines.append(f"Test Suite '{cls}' started.")
        for test in _SWIFT_TESTS[cls]:
            count += 1
            secs = rng.randint(1, 400) / 1000
            lines.append(f"Test Case '-[TidewaterCrewTests.{cls} {test}]' started.")
            lines.append(f"Test Case '-[TidewaterCrewTests.{cls} {test}]' passed ({secs:.3f} seconds).")
        lines.append(f"Test Suite '{cls}' passed.")
    lines += [
        f"     Executed {count} tests, with 0 failures (0 unexpected) in {rng.randint(5, 90) / 10} seconds",
        "",
        "** TEST SUCCEEDED **",
    ]
    only = " ".join(f"-only-testing:TidewaterCrewTests/{cls}" for cls in classes)
    command = (
        "xcodebuild test -workspace ios/TidewaterCrew.xcworkspace -scheme TidewaterCrew "
        f"-destination 'platform=iOS Simulator,name=iPhone 15,OS=17.5' {only}"
    )
    return bash_scene(command, "\n".join(lines))


_COMMITS = {
    "solver/src": (
        "solver: reuse the distance matrix across what-if requests",
        "solver: expose search progress over the gRPC stream",
        "solver: clamp speeds to the vessel's service range",
        "solver: log dropped optional calls",
        "solver: move canal fees into the cost model",
        "solver: fix off-by-one in berth window slack",
        "solver: parse profiles from search.yaml at start-up",
        "solver: add Kiel canal closure handling",
        "solver: prometheus histogram for solve time",
        "solver: bump absl",
    ),
    "ios/TidewaterCrew/Sync": (
        "ios: retry outbox flush with jittered backoff",
        "ios: page sync by cursor instead of timestamp",
        "ios: keep poisoned outbox items for support",
        "ios: sync crew roster on shift change",
        "ios: drop the legacy v1 sync endpoint",
        "ios: handle 409 conflicts by refetching",
        "ios: background refresh only on Wi-Fi for charts",
        "ios: migrate sync state to GRDB",
    ),
    "admin/app/models": (
        "admin: charter model with demurrage factor",
        "admin: validate IMO check digit",
        "admin: soft-delete vessels",
        "admin: scope port calls by dispatcher region",
        "admin: paper_trail on charters",
        "admin: store bunker survey location as geography",
        "admin: sanctions match model",
    ),
    "infra/helm/tidewater": (
        "helm: pod disruption budget for the api",
        "helm: move solver to its own node pool",
        "helm: servicemonitor for oban metrics",
        "helm: bump cloud-sql-proxy",
        "helm: tide-sync cronjob every hour",
        "helm: network policy for redis",
        "helm: readiness probe on /healthz/ready",
    ),
    "api/lib/tidewater/positions": (
        "positions: debounce geofence events",
        "positions: store speed over ground",
        "positions: partition positions by month",
        "positions: departure detector",
        "positions: arrival detector uses zone polygons",
        "positions: drop positions older than the dedupe window",
    ),
    "api/lib/tidewater_web": (
        "web: crew socket presence",
        "web: rate limit the noon report endpoint",
        "web: JSON errors for the upload controller",
        "web: fleet map live view",
        "web: healthz/ready checks the repo and redis",
        "web: paginate vessels",
    ),
}


def _d_git_log(rng: random.Random) -> Scene:
    path = rng.choice(sorted(_COMMITS))
    messages = list(_COMMITS[path])
    extra = ("chore: mix format", "chore: bump deps", "docs: update README", "ci: cache build", "fix typo")
    n = rng.randint(20, 30)
    lines = [f"{_hex(rng, 7)} {rng.choice(messages + list(extra))}" for _ in range(n)]
    return bash_scene(f"git log --oneline -{n} -- {path}", "\n".join(lines))


_GREPS: tuple[tuple[str, str, tuple[str, ...], tuple[str, ...]], ...] = (
    (
        "def handle_event",
        "api/lib/tidewater_web/live",
        ("fleet_map_live.ex", "voyage_live.ex", "port_calls_live.ex", "alerts_live.ex", "vessel_live.ex"),
        (
            'def handle_event("select_vessel", %{"imo" => imo}, socket) do',
            'def handle_event("zoom", %{"level" => level}, socket) do',
            'def handle_event("filter", params, socket) do',
            'def handle_event("ack_alert", %{"id" => id}, socket) do',
            'def handle_event("move_window", %{"call" => call_id} = params, socket) do',
            'def handle_event("toggle_layer", %{"layer" => layer}, socket) do',
        ),
    ),
    (
        "def perform",
        "api/lib/tidewater",
        (
            "workers/ais_position_ingest.ex",
            "workers/eta_recompute.ex",
            "workers/noon_report_ingest.ex",
            "workers/geofence_alert.ex",
            "workers/plan_request.ex",
            "workers/solver_result_apply.ex",
        ),
        (
            'def perform(%Oban.Job{args: %{"vessel_id" => vessel_id}}) do',
            'def perform(%Oban.Job{args: %{"report_id" => id}, attempt: attempt}) do',
            "def perform(%Oban.Job{args: args}) do",
            'def perform(%Oban.Job{args: %{"plan_id" => plan_id}}) do',
        ),
    ),
    (
        "belongs_to|has_many",
        "admin/app/models",
        ("vessel.rb", "voyage.rb", "charter.rb", "port_call.rb", "charterer.rb", "bunker_survey.rb"),
        (
            "belongs_to :vessel",
            "belongs_to :charterer",
            "belongs_to :voyage, optional: true",
            "has_many :port_calls, -> { order(:planned_arrival) }, dependent: :destroy",
            "has_many :charters",
            "has_many :contacts, class_name: 'ChartererContact'",
            "belongs_to :port",
        ),
    ),
    (
        "func test",
        "ios/TidewaterCrewTests",
        (
            "OutboxStoreTests.swift",
            "ChartCacheTests.swift",
            "NoonReportFormTests.swift",
            "VoyageStoreTests.swift",
        ),
        (
            "func testEnqueueAssignsSequence() async throws {",
            "func testFlushStopsOnServerError() async throws {",
            "func testEvictsOldestRegion() throws {",
            "func testRequiresPosition() {",
            "func testLegOrderFollowsPlan() throws {",
            "func testFuelConvertsUnits() {",
        ),
    ),
    (
        'resource "google_',
        "infra/terraform/modules",
        ("cloudsql/main.tf", "gke/main.tf", "network/main.tf", "pubsub/main.tf", "buckets/main.tf"),
        (
            'resource "google_sql_database_instance" "this" {',
            'resource "google_container_node_pool" "pool" {',
            'resource "google_compute_subnetwork" "this" {',
            'resource "google_pubsub_subscription" "this" {',
            'resource "google_storage_bucket" "this" {',
            'resource "google_service_account" "workload" {',
            'resource "google_compute_router_nat" "nat" {',
        ),
    ),
    (
        "EXPECT_EQ|ASSERT_TRUE",
        "solver/tests",
        ("cost_model_test.cc", "tide_windows_test.cc", "berth_constraints_test.cc", "route_builder_test.cc"),
        (
            "EXPECT_EQ(plan.legs.size(), 4u);",
            "ASSERT_TRUE(result.ok()) << result.status();",
            "EXPECT_EQ(model.CallCost(call), expected);",
            "EXPECT_EQ(windows.front().start, Hours(2));",
            "ASSERT_TRUE(plan.dropped_calls.empty());",
            "EXPECT_EQ(matrix.Distance(0, 1), matrix.Distance(1, 0));",
        ),
    ),
    (
        "severity:",
        "infra/monitoring",
        (
            "alerts/gke.rules.yaml",
            "alerts/postgres.rules.yaml",
            "alerts/solver.rules.yaml",
            "alerts/sidekiq.rules.yaml",
            "alerts/blackbox.rules.yaml",
        ),
        ("          severity: page", "          severity: ticket", "          severity: info"),
    ),
    (
        "Logger.warning",
        "api/lib/tidewater",
        ("ais/stream_consumer.ex", "tides/admiralty_client.ex", "positions/geofence.ex", "solver/client.ex"),
        (
            'Logger.warning("AIS relay closed the stream, reconnecting", attempt: attempt)',
            'Logger.warning("tide station without data", station: station.code)',
            'Logger.warning("geofence event dropped: vessel unknown", mmsi: mmsi)',
            'Logger.warning("solver returned an infeasible plan", plan_id: plan_id)',
            'Logger.warning("position out of order, ignoring", vessel_id: vessel_id)',
        ),
    ),
    (
        "validates",
        "admin/app/models",
        ("vessel.rb", "charter.rb", "port_call.rb", "crew_member.rb", "charterer.rb"),
        (
            "validates :imo, presence: true, uniqueness: true, imo: true",
            "validates :flag_state, inclusion: { in: FlagState.codes }",
            "validates :demurrage_factor, numericality: { greater_than: 0 }",
            "validates :planned_arrival, presence: true",
            "validates :email, format: { with: URI::MailTo::EMAIL_REGEXP }",
            "validates :name, presence: true, length: { maximum: 120 }",
        ),
    ),
    (
        "@Published",
        "ios/TidewaterCrew/Voyage",
        ("VoyageTimelineViewModel.swift", "LegDetailViewModel.swift", "PortCallViewModel.swift"),
        (
            "@Published private(set) var legs: [VoyageLeg] = []",
            "@Published var selectedLeg: VoyageLeg?",
            "@Published private(set) var isLoading = false",
            "@Published var errorMessage: String?",
            "@Published private(set) var berthWindow: DateInterval?",
        ),
    ),
)


def _d_grep(rng: random.Random) -> Scene:
    pattern, path, files, texts = rng.choice(_GREPS)
    hits: list[tuple[str, int, str]] = []
    for _ in range(rng.randint(20, 34)):
        hits.append((rng.choice(files), rng.randint(3, 380), rng.choice(texts)))
    hits.sort(key=lambda hit: (hit[0], hit[1]))
    text = "\n".join(f"{path}/{file}:{line}:  {body}" for file, line, body in hits)
    return grep_scene(pattern, path, text)


_ENVS = ("dev", "staging", "qa", "demo")


def _d_helm_values(rng: random.Random) -> Scene:
    env = rng.choice(_ENVS)
    mem = ("512Mi", "640Mi", "768Mi", "1Gi", "1280Mi", "2Gi")
    lines = [
        "global:",
        f"  env: {env}",
        f"  imageRegistry: europe-west4-docker.pkg.dev/tidewater-{env}/images",
        "",
        "api:",
        f"  replicaCount: {rng.randint(1, 3)}",
        "  resources:",
        "    requests:",
        f"      cpu: {rng.choice((100, 200, 250))}m",
        f"      memory: {rng.choice(mem[:3])}",
        "    limits:",
        f"      cpu: {rng.choice(('500m', '1'))}",
        f"      memory: {rng.choice(mem[2:])}",
        "  autoscaling:",
        f"    enabled: {rng.choice(('true', 'false'))}",
        "",
        "obanWorker:",
        f"  replicaCount: {rng.randint(1, 2)}",
        "",
        "solver:",
        f"  replicaCount: {rng.randint(1, 2)}",
        "  resources:",
        "    requests:",
        f'      cpu: "{rng.randint(2, 8)}"',
        f"      memory: {rng.choice(('2Gi', '3Gi', '4Gi'))}",
        "",
        "admin:",
        f"  replicaCount: {rng.randint(1, 2)}",
        "  sidekiq:",
        f"    concurrency: {rng.choice((3, 5, 8))}",
        "",
        "ingress:",
        "  hosts:",
        f"    - api.{env}.tidewater.app",
        f"    - admin.{env}.tidewater.app",
    ]
    return read_scene(f"infra/helm/tidewater/values-{env}.yaml", "\n".join(lines))


def _d_xcconfig(rng: random.Random) -> Scene:
    config = rng.choice(("Debug", "Staging", "QA"))
    env = {"Debug": "dev", "Staging": "staging", "QA": "qa"}[config]
    lines = [
        f"// {config}.xcconfig",
        f"// Build settings for the {config} configuration of the crew app.",
        "",
        '#include "Base.xcconfig"',
        "",
        f"PRODUCT_BUNDLE_IDENTIFIER = app.tidewater.crew.{env}",
        f"PRODUCT_NAME = Tidewater Crew {config}",
        f"MARKETING_VERSION = 3.{rng.randint(8, 14)}.{rng.randint(0, 4)}",
        f"CURRENT_PROJECT_VERSION = {rng.randint(1100, 1299)}",
        "",
        f"TW_API_HOST = api.{env}.tidewater.app",
        f"TW_SOCKET_HOST = ws.{env}.tidewater.app",
        f"TW_UPLOAD_HOST = uploads.{env}.tidewater.app",
        f"TW_CHART_TILE_HOST = tiles.{env}.tidewater.app",
        f"TW_TELEMETRY_HOST = otel.{env}.tidewater.app",
        "",
        f"TW_SYNC_FOREGROUND_INTERVAL = {rng.choice((15, 30, 45))}",
        f"TW_SYNC_BACKGROUND_INTERVAL = {rng.choice((300, 600))}",
        f"TW_OUTBOX_MAX_BATCH = {rng.choice((10, 20, 25))}",
        "",
        f"TW_FEATURE_NOON_REPORT_V2 = {rng.choice(('YES', 'NO'))}",
        f"TW_FEATURE_OFFLINE_CHARTS = {rng.choice(('YES', 'NO'))}",
        f"TW_FEATURE_BUNKER_SURVEY = {rng.choice(('YES', 'NO'))}",
        "",
        f"SWIFT_ACTIVE_COMPILATION_CONDITIONS = {config.upper()}",
        "SWIFT_OPTIMIZATION_LEVEL = -Onone" if config == "Debug" else "SWIFT_OPTIMIZATION_LEVEL = -O",
        "CODE_SIGN_STYLE = Automatic",
    ]
    return read_scene(f"ios/TidewaterCrew/Config/{config}.xcconfig", "\n".join(lines))


_RULES = {
    "gke": (
        ("KubeNodeNotReady", 'kube_node_status_condition{condition="Ready",status="true"} == 0'),
        ("KubePodCrashLooping", "increase(kube_pod_container_status_restarts_total[15m]) > 3"),
        (
            "KubePvcAlmostFull",
            "kubelet_volume_stats_available_bytes / kubelet_volume_stats_capacity_bytes < 0.1",
        ),
        (
            "SpotPreemptionsHigh",
            'increase(kube_node_spec_taint{key="cloud.google.com/impending-node-termination"}[1h]) > 2',
        ),
    ),
    "postgres": (
        (
            "PostgresConnectionsSaturated",
            "sum(pg_stat_activity_count) / max(pg_settings_max_connections) > 0.85",
        ),
        ("PostgresDeadlocks", "increase(pg_stat_database_deadlocks[10m]) > 0"),
        ("PostgresLongTransaction", "max(pg_stat_activity_max_tx_duration) > 600"),
        ("PostgresBackupMissed", "time() - tidewater_pg_last_backup_timestamp_seconds > 93600"),
    ),
    "solver": (
        (
            "SolverPlanLatencyHigh",
            "histogram_quantile(0.9, sum by (le) (rate(tw_solve_seconds_bucket[10m]))) > 25",
        ),
        (
            "SolverInfeasibleRate",
            "sum(rate(tw_solve_infeasible_total[30m])) / sum(rate(tw_solve_total[30m])) > 0.2",
        ),
        ("SolverWatchdogKills", "increase(tw_solver_watchdog_kills_total[1h]) > 0"),
    ),
    "sidekiq": (
        ("SidekiqQueueLatency", "max(sidekiq_queue_latency_seconds) > 300"),
        ("SidekiqDeadSetGrowing", "delta(sidekiq_dead_size[1h]) > 10"),
        ("SidekiqProcessesMissing", "sum(sidekiq_processes) < 1"),
    ),
}


def _d_alert_rules(rng: random.Random) -> Scene:
    group = rng.choice(sorted(_RULES))
    lines = [
        f"# Alert rules for {group}; loaded by the Prometheus operator (PrometheusRule).",
        "# Keep expressions in sync with the Grafana dashboards of the same name.",
        "groups:",
        f"  - name: tidewater-{group}",
        "    rules:",
    ]
    for name, expr in _RULES[group]:
        lines += [
            f"      - alert: {name}",
            f"        expr: {expr}",
            f"        for: {rng.choice((5, 10, 15, 20, 30))}m",
            "        labels:",
            f"          severity: {rng.choice(('page', 'ticket'))}",
            "        annotations:",
            f'          summary: "{name} firing in {{{{ $labels.namespace }}}}"',
            "",
        ]
    return read_scene(f"infra/monitoring/alerts/{group}.rules.yaml", "\n".join(lines))


_POD_KINDS = ("admin", "api", "oban", "sidekiq", "solver", "otel-collector", "tileserver")


def _d_kubectl_pods(rng: random.Random) -> Scene:
    env = rng.choice(("staging", "dev", "qa"))
    lines = ["NAME                                      READY   STATUS    RESTARTS        AGE"]
    for kind in _POD_KINDS:
        suffix = _pod_suffix(rng)[:9]
        for _ in range(rng.randint(2, 4)):
            pod = f"tidewater-{kind}-{suffix}-{_pod_suffix(rng)[-5:]}"
            restarts = rng.choice(("0", "0", "0", f"1 ({rng.randint(2, 20)}h ago)"))
            age = rng.choice(("3h12m", "19h", "2d4h", "6d", "12d"))
            lines.append(f"{pod:<42}{'1/1':<8}{'Running':<10}{restarts:<16}{age}")
    for i in range(3):
        lines.append(f"{f'tidewater-redis-{i}':<42}{'2/2':<8}{'Running':<10}{'0':<16}{rng.randint(3, 40)}d")
    for _ in range(rng.randint(2, 4)):
        job = f"tidewater-tide-sync-{rng.randint(28_600_000, 28_700_000)}-{_pod_suffix(rng)[-5:]}"
        lines.append(f"{job:<42}{'0/1':<8}{'Completed':<10}{'0':<16}{rng.randint(2, 59)}m")
    return bash_scene(f"kubectl -n tidewater-{env} get pods", "\n".join(lines))


_OBAN_WORKERS = (
    ("ais_ingest", "AisPositionIngest"),
    ("eta_recompute", "EtaRecompute"),
    ("notifications", "CrewPushNotification"),
    ("notifications", "CharterEtaNotice"),
    ("default", "NoonReportIngest"),
    ("default", "TideTableRefresh"),
    ("manifests", "CargoManifestExport"),
)


def _d_oban_logs(rng: random.Random) -> Scene:
    minutes = rng.randint(2, 30)
    lines = []
    for _ in range(rng.randint(22, 40)):
        queue, worker = rng.choice(_OBAN_WORKERS)
        stamp = f"2024-07-{rng.randint(1, 28):02d}T{_clock(rng)}.{rng.randint(100, 999)}Z"
        job = rng.randint(10_000_000, 99_999_999)
        lines.append(
            f'{stamp} [info] {{"event":"job:stop","queue":"{queue}","worker":"Tidewater.Workers.{worker}",'
            f'"id":{job},"attempt":1,"duration_ms":{rng.randint(3, 4000)},"state":"success"}}'
        )
    lines.sort()
    command = f"kubectl -n tidewater-prod logs deploy/tidewater-oban --since={minutes}m --tail=40"
    return bash_scene(command, "\n".join(lines))


_SCENARIOS = (
    "baltic_shuttle_w27",
    "med_feeder_w29",
    "biscay_coastal_w30",
    "irish_sea_ro_ro_w28",
    "channel_ports_w31",
)
_VESSELS = (
    "MV Baltic Osprey",
    "MV Nordic Lark",
    "MV Biscay Pioneer",
    "MV Liffey Spirit",
    "MV Solent Dawn",
    "MV Gdansk Merchant",
    "MV Douro Bay",
)


def _d_tw_solve(rng: random.Random) -> Scene:
    scenario = rng.choice(_SCENARIOS)
    profile = rng.choice(("default", "small_voyage", "what_if"))
    vessels = rng.sample(_VESSELS, rng.randint(3, 5))
    day = f"2024-07-{rng.randint(1, 28):02d}"

    def log(text: str) -> str:
        return f"[{day} {_clock(rng)}.{rng.randint(100, 999)}] [info] {text}"

    calls = rng.randint(10, 24)
    lines = [
        log(f"tw_solve 2.8.{rng.randint(0, 1)} ({rng.choice((8, 16))} threads, seed {rng.randint(1, 9)})"),
        log(f"profile {profile}"),
        log(
            f"scenario {scenario}: {len(vessels)} vessels, {calls} port calls, "
            f"{rng.randint(2, 9)} berth windows"
        ),
        log(f"distance matrix: {calls + 4}x{calls + 4} sea-route distances in {rng.randint(20, 90)} ms"),
        log(f"tide windows: {rng.randint(10, 50)} windows from {rng.randint(3, 8)} stations"),
        log(f"draft limits loaded for {rng.randint(3, 9)} ports"),
        log(f"warm start: {rng.choice(('none', 'previous plan'))}"),
    ]
    cost = rng.randint(30_000_000, 90_000_000)
    lines.append(log(f"first solution: cost {cost:,} (feasible) after {rng.randint(80, 400)} ms"))
    for _ in range(rng.randint(3, 6)):
        cost = int(cost * rng.uniform(0.9, 0.99))
        lines.append(log(f"improvement: cost {cost:,} at {rng.randint(5, 290) / 10} s"))
    lines.append(log("plan summary:"))
    total = 0.0
    for vessel in vessels:
        nm = rng.randint(1500, 7000) / 10
        total += nm
        lines.append(
            log(f"  {vessel:<18} {rng.randint(2, 7)} calls  {nm:7.1f} nm  {rng.randint(95, 150) / 10} kn")
        )
    lines.append(log(f"  total                        {total:8.1f} nm"))
    lines.append(log(f"dropped calls: {rng.choice(('none', '1 optional', '2 optional'))}"))
    lines.append(log(f"waiting at anchor: {rng.randint(0, 40) / 4} h total"))
    lines.append(log(f"wrote plan to out/{scenario}.plan.json"))
    lines.append(log(f"objective {cost:,} in {rng.randint(5, 300) / 10} s wall"))
    command = f"./solver/build/tw_solve --scenario solver/scenarios/{scenario}.json --profile {profile}"
    return bash_scene(command, "\n".join(lines))


_TF_RESOURCES = (
    "google_compute_network.main",
    "google_compute_subnetwork.gke",
    "google_compute_router.main",
    "google_compute_router_nat.main",
    "google_service_account.api",
    "google_service_account.solver",
    "google_service_account.admin",
    "google_sql_database_instance.main",
    "google_sql_database.tidewater",
    "google_sql_user.api",
    "google_storage_bucket.exports",
    "google_storage_bucket.chart_tiles",
    "google_pubsub_topic.ais_positions",
    "google_pubsub_subscription.ais_positions_api",
    "google_container_cluster.main",
    "google_container_node_pool.general",
    "google_container_node_pool.solver",
    "google_redis_instance.cache",
    "google_artifact_registry_repository.images",
    "google_dns_managed_zone.internal",
)


def _d_terraform_ok(rng: random.Random) -> Scene:
    env = rng.choice(("dev", "staging", "qa"))
    resources = rng.sample(_TF_RESOURCES, rng.randint(16, len(_TF_RESOURCES)))
    lines = [f"{res}: Refreshing state... [id={env}-{_hex(rng, 8)}]" for res in resources]
    lines += [
        "",
        "No changes. Your infrastructure matches the configuration.",
        "",
        "Terraform has compared your real infrastructure against your configuration and found no",
        "differences, so no changes are needed.",
    ]
    return bash_scene(f"terraform -chdir=infra/terraform/envs/{env} plan", "\n".join(lines))


_MODELS = {
    "vessel": ("Vessel", ("imo", "name", "flag_state", "deadweight_t", "design_speed_kn", "max_draft_cm")),
    "charter": (
        "Charter",
        ("charterer_id", "vessel_id", "starts_on", "ends_on", "demurrage_factor", "rate_usd"),
    ),
    "port_call": (
        "PortCall",
        ("voyage_id", "port_id", "planned_arrival", "berth_window_start", "berth_window_end"),
    ),
    "crew_member": (
        "CrewMember",
        ("given_name", "family_name", "rank", "nationality", "medical_valid_until"),
    ),
    "bunker_survey": ("BunkerSurvey", ("vessel_id", "port_id", "delivered_t", "grade", "surveyed_at")),
}


def _d_rails_model(rng: random.Random) -> Scene:
    name = rng.choice(sorted(_MODELS))
    klass, columns = _MODELS[name]
    lines = [
        f"class {klass} < ApplicationRecord",
        "  has_paper_trail",
        "",
    ]
    for column in rng.sample(columns, len(columns)):
        lines.append(f"  validates :{column}, presence: true")
    lines += [
        "",
        f"  scope :recent, -> {{ where(created_at: {rng.randint(7, 90)}.days.ago..) }}",
        "  scope :by_region, ->(region) { joins(:port).where(ports: { region: region }) }",
        "",
        "  def self.ransackable_attributes(_auth = nil)",
        f"    %w[{' '.join(columns[:3])}]",
        "  end",
        "",
        "  def display_name",
        f'    "#{{self.class.model_name.human}} ##{{id.first({rng.randint(6, 8)})}}"',
        "  end",
        "",
        "  def stale?",
        f"    updated_at < {rng.randint(2, 48)}.hours.ago",
        "  end",
        "end",
    ]
    return read_scene(f"admin/app/models/{name}.rb", "\n".join(lines))


def _d_psql_jobs(rng: random.Random) -> Scene:
    lines = [
        "     queue     |   state   | count",
        "---------------+-----------+-------",
    ]
    rows = 0
    for queue in ("ais_ingest", "default", "eta_recompute", "manifests", "notifications"):
        for state in ("available", "completed", "discarded", "executing", "retryable", "scheduled"):
            rows += 1
            lines.append(f" {queue:<13} | {state:<9} | {rng.randint(0, 90_000):>5}")
    lines += [f"({rows} rows)", ""]
    env = rng.choice(("prod", "staging"))
    command = (
        f'psql "$TW_{env.upper()}_RO_URL" -c "SELECT queue, state, count(*) FROM oban_jobs '
        f"WHERE inserted_at > now() - interval '{rng.randint(1, 48)} hours' GROUP BY 1, 2 ORDER BY 1, 2;\""
    )
    return bash_scene(command, "\n".join(lines))


# The grep template covers ten searches, so it is drawn four times as often as the others.
_TEMPLATES: tuple[Callable[[random.Random], Scene], ...] = (
    *(_d_grep,) * 3,
    _d_mix_test_pass,
    _d_rspec_pass,
    _d_ctest_pass,
    _d_xcode_test_pass,
    _d_git_log,
    _d_grep,
    _d_helm_values,
    _d_xcconfig,
    _d_alert_rules,
    _d_kubectl_pods,
    _d_oban_logs,
    _d_tw_solve,
    _d_terraform_ok,
    _d_rails_model,
    _d_psql_jobs,
)

_ANSWERS = tuple(fact.answer for fact in FACTS)
# A distractor runs none of the facts' commands on none of their paths, and its output names neither.
_FACT_ARGS = frozenset(str(value) for fact in FACTS for value in fact.scene.args.values())
_FACT_NAMES = tuple(
    str(fact.scene.args["path"] if fact.scene.tool == "read_file" else fact.scene.args["command"])
    for fact in FACTS
    if fact.scene.tool in ("read_file", "bash")
)


def _acceptable(scene: Scene) -> bool:
    values = [str(value) for value in scene.args.values()]
    if any(value in _FACT_ARGS for value in values):
        return False
    if any(answer in value for answer in _ANSWERS for value in values):
        return False
    if any(answer in scene.output for answer in _ANSWERS):
        return False
    return not any(name in scene.output for name in _FACT_NAMES)


def distractors(seed: int, count: int) -> list[Scene]:
    """`count` look-alike outputs of the project holding no fact's answer, path or command."""
    return draw(seed, count, _TEMPLATES, _acceptable)
