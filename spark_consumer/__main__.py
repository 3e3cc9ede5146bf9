"""`python -m spark_consumer ARGS` and `spark-submit .../spark_consumer/__main__.py ARGS`."""

import sys

from spark_consumer.job.main import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
