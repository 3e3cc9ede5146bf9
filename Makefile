# gtidmark — the commands the README gives. `make setup` once, then `make test`.
PY := .venv/bin/python
STAMP := .venv/.installed

.PHONY: setup apt mysql-root jars kafka-jars connect-jars native test test-spark4 test-unit demo lint \
	typecheck bench clean

setup: apt mysql-root $(STAMP) native jars kafka-jars connect-jars

# The compiled module (Rust, PyO3): connector/native -> connector/_native, built for the
# venv's CPython (its datetime C API is not in the limited API: no abi3 module). Crates
# come from crates.io into cargo's own cache.
NATIVE_SRC := connector/native
NATIVE_PY := $(shell [ -x $(PY) ] && echo $(CURDIR)/$(PY) || command -v python3)
NATIVE := connector/_native$(shell $(NATIVE_PY) -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
native: $(NATIVE)

$(NATIVE): $(NATIVE_SRC)/Cargo.toml $(NATIVE_SRC)/Cargo.lock $(wildcard $(NATIVE_SRC)/src/*.rs)
	@command -v cargo >/dev/null 2>&1 || { echo "setup: cargo not found: install Rust (rustup.rs), then run make setup again" >&2; exit 1; }
	@PYO3_PYTHON=$(NATIVE_PY) cargo build --release --locked --quiet \
	  --manifest-path $(NATIVE_SRC)/Cargo.toml \
	  || { echo "setup: building $(NATIVE) failed (cargo's errors above)" >&2; exit 1; }
	@# a new file, renamed into place: a running gtidmark keeps the module it mapped
	@cp $(NATIVE_SRC)/target/release/lib_native.so $(NATIVE).new && mv -f $(NATIVE).new $(NATIVE)
	@# the abi3 module of earlier checkouts would be imported by another CPython
	@rm -f connector/_native.abi3.so

# prometheus: only its binary, for the dashboard test (tests start their own on a free port);
# without recommends (node-exporter). On a systemd host its package also starts a service
# on :9090 that the tests do not use.
apt:
	@missing=""; \
	command -v mariadbd >/dev/null 2>&1 || missing="$$missing mariadb-server"; \
	command -v java >/dev/null 2>&1 || missing="$$missing default-jre-headless"; \
	command -v mvn >/dev/null 2>&1 || missing="$$missing maven"; \
	command -v openssl >/dev/null 2>&1 || missing="$$missing openssl"; \
	[ -f /usr/include/mariadb/mysql.h ] || missing="$$missing libmariadb-dev"; \
	command -v pkg-config >/dev/null 2>&1 || missing="$$missing pkg-config"; \
	[ -x /usr/sbin/debootstrap ] || missing="$$missing debootstrap"; \
	bare=""; command -v prometheus >/dev/null 2>&1 || bare="prometheus"; \
	if [ -n "$$missing$$bare" ]; then \
	  echo "setup: installing$$missing $$bare"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && \
	  { [ -z "$$missing" ] || DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing; } && \
	  { [ -z "$$bare" ] || DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $$bare; }; \
	fi

$(STAMP): pyproject.toml
	@[ -x $(PY) ] || python3 -m venv .venv
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test,spark,avro]'
	@touch $(STAMP)

# The Spark job runs on Spark 3.5 (.venv, the `spark` extra: the whole suite) and on Spark 4.1:
# a second virtualenv with the `spark4` extra, for the job's own tests on that line
# (test-spark4). The same project, installed editable in both.
SPARK4_LINE := 4.1
SPARK4_PY := .venv-spark4/bin/python
SPARK4_STAMP := .venv-spark4/.installed

$(SPARK4_STAMP): pyproject.toml
	@[ -x $(SPARK4_PY) ] || python3 -m venv .venv-spark4
	$(SPARK4_PY) -m pip install -q --upgrade pip
	$(SPARK4_PY) -m pip install -q -e '.[test,spark4,avro]'
	@touch $(SPARK4_STAMP)

# MySQL 9 for the tests, in a Debian sid root outside the project (scripts/mysql-root).
mysql-root: apt
	@scripts/mysql-root

# The Spark job's jars (Spark's Kafka source, Iceberg's runtime) for each virtualenv's pyspark
# line, from Maven Central: scripts/maven/spark-MAJOR.MINOR.xml.
jars: $(STAMP) $(SPARK4_STAMP) apt
	@for py in $(PY) $(SPARK4_PY); do \
	  scripts/maven-jars spark-$$($$py -c 'from spark_consumer.jars import spark_line; print(spark_line())') \
	  || exit 1; \
	done

# Apache Kafka 4.4 (KRaft) for the tests, the demo and the bench, from Maven Central.
kafka-jars: apt
	@scripts/maven-jars kafka

# A Kafka Connect 4.3 worker and Debezium 3.6.1's MySQL connector as its plugin (a directory
# of the worker's plugin.path), for the tests that hold gtidmark against Debezium on Connect.
connect-jars: apt
	@scripts/maven-jars connect
	@scripts/maven-jars connect-plugins/debezium-mysql

test: setup
	$(PY) -m mypy
	$(PY) -m ruff check connector signals spark_consumer tests bench
	$(PY) -m pytest -q -n 2 --dist loadfile
	@$(MAKE) --no-print-directory test-spark4

# The job end to end (MariaDB), on a standalone cluster, killed and rerun, and its Spark
# reader's conversions, on Spark 4.1: GTIDMARK_SPARK_LINE fails them on any other line.
SPARK4_TESTS := tests/spark/test_end_to_end.py tests/spark/test_cluster.py \
	tests/spark/test_exactly_once.py tests/spark/test_jvm_conversions.py
test-spark4: $(SPARK4_STAMP) jars
	GTIDMARK_SPARK_LINE=$(SPARK4_LINE) $(SPARK4_PY) -m pytest -q -n 2 --dist loadfile \
	  -k 'not mysql' $(SPARK4_TESTS)

test-unit: $(STAMP)
	$(PY) -m pytest -q tests/unit

lint: $(STAMP)
	$(PY) -m ruff check connector signals spark_consumer tests bench

typecheck: $(STAMP)
	$(PY) -m mypy

# make demo [FLAVOUR=mysql]: the source database of the demo (mariadb by default).
FLAVOUR ?= mariadb
demo: setup
	$(PY) -m connector.demo --flavour $(FLAVOUR)

bench: setup
	$(PY) bench/encode.py
	$(PY) bench/stream.py
	$(PY) bench/snapshot.py
	$(PY) bench/memory.py
	$(PY) bench/spark_apply.py

clean:
	rm -rf .venv .venv-spark4 .local build *.egg-info $(NATIVE_SRC)/target $(NATIVE)
