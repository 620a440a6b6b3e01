package fakejm

import (
	"strconv"
	"strings"
)

// Flink's metric ids, written the way a JobManager writes them (see
// ../shared/reference/flink-rest.md, "How a metric becomes a REST metric
// id"). The fake writes them itself rather than borrowing the collector's
// parser helpers, so a test of the collector against the fake checks the
// collector against Flink's rules, not against its own code.

// maxOperatorName is ConfigConstants.METRICS_OPERATOR_NAME_MAX_LENGTH.
const maxOperatorName = 80

// MetricName is MetricQueryService's character filter: each space, '.',
// ':' and ',' becomes '_', one for one; nothing else is touched. Flink
// applies it to operator names, user group names, keys and values, and
// metric names.
func MetricName(s string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case ' ', '.', ':', ',':
			return '_'
		}
		return r
	}, s)
}

// OperatorScope is the operator component of a metric id for an operator
// named name: MetricUtils.truncateOperatorName's cut to 80 characters
// (Flink 2.x keeps a ": Writer" or ": Committer" suffix and cuts the part
// before it), then MetricName. Flink counts UTF-16 code units; the names
// here are ASCII or counted in runes.
func OperatorScope(name string) string {
	r := []rune(name)
	if len(r) > maxOperatorName {
		suffix := []rune(nil)
		for _, s := range []string{": Writer", ": Committer"} {
			if strings.HasSuffix(name, s) {
				suffix = []rune(s)
			}
		}
		r = append(r[:maxOperatorName-len(suffix):maxOperatorName-len(suffix)], suffix...)
	}
	return MetricName(string(r))
}

// The Kafka source reader's per-partition offset gauges
// (KafkaSourceReaderMetrics).
const (
	CurrentOffset   = "currentOffset"
	CommittedOffset = "committedOffset"
)

// KafkaOffsetID is the operator-relative id of a Kafka source reader's
// offset gauge for one partition:
// "<operator>.KafkaSourceReader.topic.<topic>.partition.<n>.<gauge>", the
// topic being a user group value (sanitised). operator is the operator's
// name as the job gives it.
func KafkaOffsetID(operator, topic string, partition int32, gauge string) string {
	return OperatorScope(operator) + "." + kafkaOffsetRel(topic, partition, gauge)
}

// kafkaOffsetRel is KafkaOffsetID after the operator component.
func kafkaOffsetRel(topic string, partition int32, gauge string) string {
	return "KafkaSourceReader.topic." + MetricName(topic) + ".partition." + strconv.Itoa(int(partition)) + "." + gauge
}

// SplitWatermarkID is the operator-relative id of a FLIP-27 split's
// watermark gauge (Flink ≥ 2.1): "<operator>.split.<splitId>.watermark.<gauge>",
// where a Kafka split's id is "<topic>-<partition>", sanitised as a group
// name.
func SplitWatermarkID(operator, topic string, partition int32, gauge string) string {
	return OperatorScope(operator) + "." + splitWatermarkRel(topic, partition, gauge)
}

func splitWatermarkRel(topic string, partition int32, gauge string) string {
	return "split." + MetricName(topic+"-"+strconv.Itoa(int(partition))) + ".watermark." + gauge
}

// SubtaskID is id as the vertex metric store lists it: prefixed with the
// subtask index.
func SubtaskID(subtask int, id string) string { return strconv.Itoa(subtask) + "." + id }
