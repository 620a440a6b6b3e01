#!/usr/bin/env bash
# Records the job plans of the SQL shapes in sqlplan/testdata/gen
# (PlanRecorder) on each Flink line, into sqlplan/testdata/<Flink version>/:
# no cluster, Flink's own planner and JsonPlanGenerator from Maven Central.
# About 20 s per line on 2 cores once ~/.m2 has the jars.
#
# Usage: scripts/sqlplans.sh [line ...]   (default: 1.20 2.2 2.3)
set -euo pipefail
cd "$(dirname "$0")/.."

lines=("$@")
[ "${#lines[@]}" -gt 0 ] || lines=(1.20 2.2 2.3)
gen=sqlplan/testdata/gen
for line in "${lines[@]}"; do
	echo "sqlplans: Flink $line"
	mvn -q -B -f "$gen/pom.xml" -P "flink-$line" compile dependency:build-classpath
	java -cp "$gen/target/$line/classes:$(cat "$gen/target/$line/classpath.txt")" \
		skewscope.sqlplan.PlanRecorder sqlplan/testdata 2>&1 | grep -v '^SLF4J: '
done
