"""The outside recall probe's sealed set: eight facts of "riverbed", a data platform.

riverbed loads a shop's events and orders into a warehouse: Airflow DAGs (dags/), dbt models on
Trino (warehouse/), Spark jobs on Kubernetes (jobs/), Kafka topics for the raw events, S3 for the
lake. Three work runs read and run its files among look-alikes (other DAGs, models, Spark logs,
configs of the same project); the second run's user message carries a person's decision. Then
eight questions, two in the words the fact was planted in and six in other words. No question
holds its answer.

Written 2026-12-05 with the development set (recall_outside_facts.py), before the ranking was
tuned; sealed: nobody reads its results while tuning, and it is run once at the end.
"""

# ruff: noqa: E501  (outputs are quoted as the tools print them)
from __future__ import annotations

import random

from recall_outside import Question, Run, Step, draw, mixed

SPARK_SUBMIT = """\
26/12/04 02:10:11 INFO SparkContext: Running Spark version 3.5.1
26/12/04 02:10:11 INFO ResourceUtils: No custom resources configured for spark.driver.
26/12/04 02:10:11 INFO SparkContext: Submitted application: sessionize-clickstream
26/12/04 02:10:12 INFO SecurityManager: Changing view acls to: spark
26/12/04 02:10:12 INFO Utils: Successfully started service 'sparkDriver' on port 7078.
26/12/04 02:10:12 INFO SparkEnv: Registering MapOutputTracker
26/12/04 02:10:12 INFO SparkEnv: Registering BlockManagerMaster
26/12/04 02:10:13 WARN Utils: Service 'SparkUI' could not bind on port 4040. Attempting port 4041.
26/12/04 02:10:13 INFO Utils: Successfully started service 'SparkUI' on port 4041.
26/12/04 02:10:13 INFO SparkUI: Bound SparkUI to 0.0.0.0, and started at http://sessionize-driver-svc.jobs.svc:4041
26/12/04 02:10:14 INFO KubernetesClusterSchedulerBackend: Requesting 6 executors
26/12/04 02:10:31 INFO BlockManagerMasterEndpoint: Registering block manager 10.42.3.17:7079 with 4.6 GiB RAM
"""

DBT_DEBUG = """\
02:31:05  Running with dbt=1.8.4
02:31:05  dbt version: 1.8.4
02:31:05  python version: 3.11.9
02:31:05  os info: Linux-5.15.0-1064-aws-x86_64-with-glibc2.36
02:31:05  Using profiles dir at /opt/airflow/dbt/profiles
02:31:05  Using profiles.yml file at /opt/airflow/dbt/profiles/profiles.yml
02:31:05  Using dbt_project.yml file at /opt/airflow/warehouse/dbt_project.yml
02:31:05  adapter type: trino
02:31:05  adapter version: 1.8.1
02:31:05  Configuration:
02:31:05    profiles.yml file [OK found and valid]
02:31:05    dbt_project.yml file [OK found and valid]
02:31:05  Required dependencies:
02:31:05   - git [OK found]
02:31:06  Connection:
02:31:06    host: trino.data.svc
02:31:06    port: 8443
02:31:06    catalog: lake
02:31:06    schema: marts
02:31:06  All checks passed!
"""

DBT_RUN_FAIL = """\
02:40:12  Running with dbt=1.8.4
02:40:13  Found 64 models, 212 data tests, 18 sources, 931 macros
02:40:13  Concurrency: 6 threads (target='prod')
02:40:15  1 of 9 START sql table model marts.dim_customers ............................ [RUN]
02:40:19  1 of 9 OK created sql table model marts.dim_customers ....................... [SUCCESS 1 in 4.02s]
02:40:19  2 of 9 START sql incremental model marts.fct_orders ......................... [RUN]
02:40:21  2 of 9 ERROR creating sql incremental model marts.fct_orders ................ [ERROR in 1.88s]
02:40:21  3 of 9 SKIP relation marts.fct_order_items .................................. [SKIP]
02:40:44  Finished running 2 table models, 7 incremental models in 0 hours 0 minutes and 31.02 seconds (31.02s).
02:40:44  Completed with 1 error and 0 warnings:
02:40:44
02:40:44    Database Error in model fct_orders (models/marts/fct_orders.sql)
  TrinoUserError(type=USER_ERROR, name=COLUMN_NOT_FOUND, message="line 41:9: Column 'discount_amt' cannot be resolved", query_id=20261204_024020_00317_k2x9p)
02:40:44
02:40:44  Done. PASS=6 WARN=0 ERROR=1 SKIP=2 TOTAL=9
"""

LOAD_ORDERS_DAG = """\
from datetime import datetime, timedelta

from airflow import DAG
from airflow.providers.cncf.kubernetes.operators.pod import KubernetesPodOperator

DEFAULTS = {
    "owner": "data-platform",
    "retries": 2,
    "retry_delay": timedelta(minutes=5),
}

with DAG(
    dag_id="load_orders",
    start_date=datetime(2026, 1, 1),
    schedule="15 2 * * *",
    catchup=False,
    max_active_runs=1,
    default_args=DEFAULTS,
) as dag:
    extract = KubernetesPodOperator(
        task_id="extract_orders",
        image="riverbed/extract:2026.11.3",
        arguments=["--source", "shopdb", "--table", "orders"],
        execution_timeout=timedelta(minutes=40),
    )
    load = KubernetesPodOperator(
        task_id="load_orders_to_lake",
        image="riverbed/load:2026.11.3",
        arguments=["--target", "s3://riverbed-lake/raw/orders/"],
        execution_timeout=timedelta(minutes=85),
    )
    transform = KubernetesPodOperator(
        task_id="dbt_build_orders",
        image="riverbed/dbt:1.8.4",
        arguments=["build", "--select", "fct_orders+"],
        execution_timeout=timedelta(minutes=30),
    )
    extract >> load >> transform
"""

GREP_DEDUPE = """\
jobs/clickstream/transforms.py:12:def parse_user_agent(ua):
jobs/clickstream/transforms.py:35:def sessionize(df, gap_minutes=30):
jobs/clickstream/transforms.py:71:def dedupe_late_arriving_events(df, watermark="2 hours"):
jobs/clickstream/transforms.py:104:def enrich_with_geo(df, geo_table):
jobs/clickstream/transforms.py:139:def bot_filter(df, rules):
jobs/orders/transforms.py:9:def normalize_currency(df, rates):
jobs/orders/transforms.py:44:def explode_line_items(df):
"""

DBT_HELP = """\
Usage: dbt run [OPTIONS]

  Compile SQL and execute against the current target database.

Options:
  --defer / --no-defer            If set, resolve unselected nodes by deferring
                                  to the manifest within the --state directory.
  --empty / --no-empty            If specified, limit input refs and sources to
                                  zero rows.
  -x, --fail-fast / --no-fail-fast
                                  Stop execution on first failure.
  --full-refresh                  If specified, dbt will drop incremental models
                                  and fully-recalculate the incremental table
                                  from the model definition.
  -s, --select TEXT               Specify the nodes to include.
  --exclude TEXT                  Specify the nodes to exclude.
  --target TEXT                   Which target to load for the given profile
  --threads INTEGER               Specify number of threads to use while
                                  executing models. Overrides settings in
                                  profiles.yml.
"""

DECISION = (
    "Heads up before you touch the lake config: Tomasz decided we keep the raw clickstream in S3 "
    "for 400 days, not 90 (legal asked for it), so leave the lifecycle rules alone. Next, look at "
    "the orders DAG and the dbt side of it."
)

_DAGS = ("load_customers", "load_refunds", "load_inventory", "sync_marketing", "export_finance", "sessionize_clickstream",
         "load_shipments", "load_reviews", "sync_crm", "export_tax", "backfill_events", "compact_lake")  # fmt: skip
_MODELS = ("dim_products", "dim_stores", "fct_refunds", "fct_sessions", "fct_inventory_daily", "stg_events",
           "dim_dates", "dim_campaigns", "fct_shipments", "fct_reviews", "stg_refunds", "fct_payments")  # fmt: skip


def _dag(rng: random.Random, name: str) -> Step:
    tasks = []
    for step in rng.sample(("extract", "load", "validate", "publish", "compact"), 3):
        tasks += [f"    {step} = KubernetesPodOperator(", f'        task_id="{step}_{name.split("_", 1)[1]}",',
                  f'        image="riverbed/{step}:2026.11.{rng.randint(1, 4)}",',
                  f"        execution_timeout=timedelta(minutes={rng.choice((10, 20, 45, 60, 120))}),", "    )"]  # fmt: skip
    head = ["from datetime import datetime, timedelta", "", "from airflow import DAG", "",
            f'with DAG(dag_id="{name}", schedule="{rng.randint(0, 59)} {rng.randint(0, 5)} * * *", catchup=False) as dag:']  # fmt: skip
    return Step("read_file", f"dags/{name}.py", "\n".join(head + tasks) + "\n")


def _dbt_ok(rng: random.Random, model: str) -> Step:
    lines = [f"02:{rng.randint(10, 59)}:0{rng.randint(0, 9)}  Running with dbt=1.8.4",
             "02:50:13  Found 64 models, 212 data tests, 18 sources, 931 macros",
             f"02:50:15  1 of 1 START sql incremental model marts.{model} ................ [RUN]",
             f"02:50:{rng.randint(16, 59)}  1 of 1 OK created sql incremental model marts.{model} ..... [SUCCESS {rng.randint(100, 90000)} in {rng.uniform(1, 40):.2f}s]",
             "02:51:00  Done. PASS=1 WARN=0 ERROR=0 SKIP=0 TOTAL=1"]  # fmt: skip
    return Step("bash", f"dbt run --select {model}", "\n".join(lines) + "\n")


def _spark_log(rng: random.Random, job: str) -> Step:
    lines = []
    for n in range(16):
        lines.append(
            f"26/12/03 0{rng.randint(1, 4)}:{n:02d}:{rng.randint(10, 59)} INFO TaskSetManager: Finished task {n}.0 in stage {rng.randint(1, 9)}.0 (TID {rng.randint(100, 999)}) in {rng.randint(200, 9000)} ms on 10.42.{rng.randint(1, 9)}.{rng.randint(2, 250)} (executor {rng.randint(1, 6)}) ({n + 1}/16)"
        )
    lines.append(f"26/12/03 04:59:59 INFO SparkContext: Successfully stopped SparkContext ({job})")
    return Step("bash", f"kubectl logs -n jobs {job}-driver --tail 17", "\n".join(lines) + "\n")


def _model_sql(rng: random.Random, model: str) -> Step:
    cols = rng.sample(
        (
            "order_id",
            "customer_id",
            "store_id",
            "amount",
            "currency",
            "created_at",
            "updated_at",
            "status",
            "channel",
        ),
        6,
    )
    lines = ["{{ config(materialized='incremental', unique_key='" + cols[0] + "', on_schema_change='append_new_columns') }}", "",
             "select", *(f"    {c}," for c in cols[:-1]), f"    {cols[-1]}", f"from {{{{ ref('stg_{model.split('_', 1)[1]}') }}}}",
             "{% if is_incremental() %}", f"where updated_at > (select max(updated_at) from {{{{ this }}}}) - interval '{rng.randint(1, 6)}' hour", "{% endif %}"]  # fmt: skip
    return Step("read_file", f"warehouse/models/marts/{model}.sql", "\n".join(lines) + "\n")


def _values(rng: random.Random, chart: str) -> Step:
    lines = [f"# {chart}: helm values", "replicaCount: " + str(rng.randint(1, 4)), "service:",
             f"  port: {rng.randint(3000, 9999)}", "resources:", f"  limits: {{cpu: {rng.randint(1, 4)}, memory: {rng.choice(('2Gi', '4Gi', '8Gi'))}}}",
             "env:", f"  LOG_LEVEL: {rng.choice(('info', 'debug'))}", f"  REQUEST_TIMEOUT_SECONDS: \"{rng.choice((15, 30, 60))}\"",
             f"  RETENTION_DAYS: \"{rng.choice((7, 14, 30, 90))}\""]  # fmt: skip
    return Step("read_file", f"deploy/charts/{chart}/values.yaml", "\n".join(lines) + "\n")


def _dbt_test(rng: random.Random, model: str) -> Step:
    lines = [
        "02:55:01  Running with dbt=1.8.4",
        "02:55:02  Found 64 models, 212 data tests, 18 sources, 931 macros",
    ]
    for n, test in enumerate(rng.sample(("not_null", "unique", "accepted_values", "relationships"), 3), 1):
        lines.append(
            f"02:55:0{n + 2}  {n} of 3 PASS {test}_{model}_{rng.choice(('id', 'created_at', 'status'))} ........ [PASS in {rng.uniform(0.3, 4):.2f}s]"
        )
    lines.append("02:55:09  Done. PASS=3 WARN=0 ERROR=0 SKIP=0 TOTAL=3")
    return Step("bash", f"dbt test --select {model}", "\n".join(lines) + "\n")


def _pods(rng: random.Random, namespace: str) -> Step:
    lines = ["NAME                                   READY   STATUS      RESTARTS   AGE"]
    for n in range(8):
        lines.append(
            f"{namespace}-{rng.choice(('worker', 'scheduler', 'api', 'exec'))}-{rng.randint(1000, 9999)}-{n}   1/1     {rng.choice(('Running', 'Completed', 'Running'))}   {rng.randint(0, 3)}          {rng.randint(1, 40)}h"
        )
    return Step("bash", f"kubectl get pods -n {namespace}", "\n".join(lines) + "\n")


def _looks(seed: int, counts: tuple[int, ...]) -> list[list[Step]]:
    """`counts` look-alikes for each run, none of them a path or a command another one has."""
    rng = random.Random(seed)
    makers = [
        lambda: _dag(rng, rng.choice(_DAGS)),
        lambda: _dbt_ok(rng, rng.choice(_MODELS)),
        lambda: _spark_log(
            rng,
            rng.choice(
                (
                    "sessionize",
                    "geo-enrich",
                    "bot-filter",
                    "compact-lake",
                    "refund-match",
                    "fx-rates",
                    "inventory-snap",
                    "reviews-nlp",
                )
            ),
        ),
        lambda: _model_sql(rng, rng.choice(_MODELS)),
        lambda: _values(
            rng,
            rng.choice(
                (
                    "trino",
                    "airflow",
                    "kafka-connect",
                    "superset",
                    "schema-registry",
                    "spark-operator",
                    "minio",
                    "grafana",
                )
            ),
        ),
        lambda: _dbt_test(rng, rng.choice(_MODELS)),
        lambda: _pods(rng, rng.choice(("jobs", "airflow", "trino", "kafka", "monitoring", "superset"))),
    ]
    return draw(rng, makers, counts)


_LOOKS = _looks(11, (22, 22, 26))

RUNS = (
    Run(
        "The nightly orders build failed. Look around the jobs and the warehouse before fixing anything.",
        mixed(
            [
                Step(
                    "bash", "spark-submit --deploy-mode cluster jobs/clickstream/sessionize.py", SPARK_SUBMIT
                ),
                Step("bash", "dbt debug", DBT_DEBUG),
                Step("bash", "dbt run --select fct_orders+", DBT_RUN_FAIL),
                Step("bash", "grep -rn def jobs/", GREP_DEDUPE),
            ],
            _LOOKS[0],
        ),
    ),
    Run(
        DECISION,
        mixed(
            [
                Step("read_file", "dags/load_orders.py", LOAD_ORDERS_DAG),
                Step("bash", "dbt run --help", DBT_HELP),
            ],
            _LOOKS[1],
        ),
    ),
    Run("Go through the remaining DAGs and charts and note anything that looks off.", _LOOKS[2]),
)

QUESTIONS = (
    Question(
        "where can I open the web UI of the sessionize job?",
        "http://sessionize-driver-svc.jobs.svc:4041",
        "other",
        "port",
    ),
    Question("which profiles dir is dbt using?", "/opt/airflow/dbt/profiles", "planted", "config path"),
    Question(
        "why did the orders fact table break last night?",
        "Column 'discount_amt' cannot be resolved",
        "other",
        "error line",
    ),
    Question("which Spark release does the cluster run?", "Spark version 3.5.1", "other", "version"),
    Question("how long are we supposed to hold on to the raw clicks?", "400 days", "other", "decision"),
    Question(
        "what is the execution timeout of the load orders to lake task?",
        "timedelta(minutes=85)",
        "planted",
        "timeout",
    ),
    Question(
        "what's the function that throws away repeated events that show up late?",
        "dedupe_late_arriving_events",
        "other",
        "function name",
    ),
    Question(
        "how do I make dbt rebuild the incremental tables from scratch?", "--full-refresh", "other", "flag"
    ),
)
