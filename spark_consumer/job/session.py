"""The SparkSession of the job: Iceberg extensions, the catalog, and (locally) offline jars."""

from __future__ import annotations

import os

from pyspark import SparkConf, SparkContext
from pyspark.sql import SparkSession

from spark_consumer.job.options import JobOptions

EXTENSIONS = "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions"


def catalog_conf(opts: JobOptions) -> dict[str, str]:
    """The catalog's settings: --catalog-config/--catalog-conf, else a local Hadoop catalog.

    Set on the running session, never given to the JVM at launch: PySpark passes launch
    settings to spark-submit as `--conf KEY=VALUE` arguments, which `ps` shows.
    """
    conf = {f"spark.sql.catalog.{opts.catalog_name}": "org.apache.iceberg.spark.SparkCatalog"}
    prefix = f"spark.sql.catalog.{opts.catalog_name}."
    if opts.catalog_conf:
        conf.update({prefix + k: v for k, v in opts.catalog_conf.items()})
    else:
        conf[prefix + "type"] = "hadoop"
        conf[prefix + "warehouse"] = os.path.abspath(opts.warehouse)
    return conf


def session_conf(opts: JobOptions) -> dict[str, str]:
    """Spark launch settings for `opts`; user --spark-conf wins over these defaults."""
    conf: dict[str, str] = {
        "spark.sql.extensions": EXTENSIONS,
        "spark.sql.session.timeZone": "UTC",
    }
    jars = list(opts.jars)
    if opts.local_jars:
        from spark_consumer.jars import jar_paths

        jars = jar_paths() + jars
    if jars:
        conf["spark.jars"] = ",".join(jars)
    if opts.packages:
        conf["spark.jars.packages"] = ",".join(opts.packages)
    conf.update(opts.spark_conf)
    return conf


def build_session(opts: JobOptions) -> SparkSession:
    """Get or create the session; local masters get small-machine defaults."""
    if os.environ.get("PYSPARK_GATEWAY_PORT"):
        # Under spark-submit its JVM, and so its --master, is up before this Python:
        # without the gateway SparkConf() is empty and the job ran in local[2].
        SparkContext._ensure_initialized()
    existing = SparkConf()
    master = opts.master or existing.get("spark.master") or "local[2]"
    builder = SparkSession.builder.appName("gtidmark-spark-apply").master(master)
    if master.startswith("local"):
        builder = builder.config("spark.ui.enabled", "false") \
            .config("spark.ui.showConsoleProgress", "false") \
            .config("spark.sql.shuffle.partitions", "4") \
            .config("spark.driver.memory", existing.get("spark.driver.memory", "2g"))
    for key, value in session_conf(opts).items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    for key, value in catalog_conf(opts).items():
        if key not in opts.spark_conf:  # --spark-conf wins, as at launch
            spark.conf.set(key, value)
    _check_iceberg(spark)
    return spark


class MissingIcebergError(RuntimeError):
    """The Iceberg runtime is not on the driver's classpath (spark-submit without --jars)."""


def _check_iceberg(spark: SparkSession) -> None:
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    loader = jvm.java.lang.Thread.currentThread().getContextClassLoader()
    try:
        jvm.java.lang.Class.forName("org.apache.iceberg.spark.SparkCatalog", True, loader)
    except Exception:  # noqa: BLE001 - py4j wraps ClassNotFoundException
        from spark_consumer.jars import PACKAGES, spark_line

        raise MissingIcebergError(
            "Iceberg classes are not on the driver classpath: under spark-submit pass "
            "--jars \"$(python -m spark_consumer.jars | paste -sd,)\" or --packages "
            + ",".join(PACKAGES.get(spark_line(), ()))) from None
