package live

import (
	"fmt"
	"time"

	"github.com/skewscope/skewscope/collectors/kafka"
	"github.com/skewscope/skewscope/internal/quote"
)

// Topic returns a topic's page view.
func (s *State) Topic(cluster, topic string) (TopicView, error) {
	s.countView()
	ks := s.kafka[cluster]
	if ks == nil {
		//lint:ignore ST1005 the message is a page's and starts with a name, Kafka
		return TopicView{}, fmt.Errorf("Kafka cluster %s: %w", quote.Clip(cluster), ErrNotFound)
	}
	now := s.opts.Now()
	for _, t := range ks.Topics {
		if t.Name != topic {
			continue
		}
		tv := TopicView{Cluster: cluster, Name: topic, Age: within(topicAge(ks, &t, now), s.clusterAge(ks, now))}
		if t.Err != nil {
			tv.Error = t.Err.Error()
		}
		if tr, ok := retentionView(topic, t.Retention, now); ok {
			tv.Retention = &tr
		}
		type gp struct {
			g  int
			gp kafka.GroupPartition
		}
		byPart := map[int32][]gp{}
		var fresh []bool // per group of tv.Groups: its commits are from the latest poll
		for _, g := range ks.Groups {
			idx := -1
			for _, p := range g.Partitions {
				if p.Topic != topic {
					continue
				}
				if idx < 0 {
					idx = len(tv.Groups)
					tv.Groups = append(tv.Groups, TopicGroup{Name: g.Name, State: g.State, Lag: -1, States: []StateCount{}})
					fresh = append(fresh, !g.Stale)
				}
				byPart[p.Partition] = append(byPart[p.Partition], gp{idx, p})
				if p.Lag >= 0 {
					tv.Groups[idx].Lag = max(tv.Groups[idx].Lag, 0) + p.Lag
				}
			}
		}
		for _, p := range t.Partitions {
			row := TopicPartitionRow{Partition: p.Partition, Start: p.Start, End: p.End, Rate: -1, Stale: p.Stale, Groups: make([]GroupOffset, len(tv.Groups))}
			if p.RateOK {
				row.Rate = p.Rate
				tv.Rate += p.Rate
			}
			if p.Err != nil {
				row.Error = p.Err.Error()
			}
			for i := range row.Groups {
				row.Groups[i] = GroupOffset{Committed: -1, Lag: -1, LagKind: kafka.TimeLagUnknown, Reading: reading(nil, -1, true, false, now)}
			}
			for _, x := range byPart[p.Partition] {
				rs, sec, kind := s.commitLag(cluster, tv.Groups[x.g].Name, x.gp, now)
				o := GroupOffset{Committed: x.gp.Committed, Lag: x.gp.Lag, LagSeconds: sec, LagKind: kind}
				o.Reading = reading(rs, x.gp.Lag, true, fresh[x.g] && !p.Stale && x.gp.Err == nil, now)
				row.Groups[x.g] = o
			}
			tv.Partitions = append(tv.Partitions, row)
		}
		for i := range tv.Groups {
			var rs []Reading
			for _, row := range tv.Partitions {
				if o := row.Groups[i]; o.Committed >= 0 || o.Lag >= 0 {
					rs = append(rs, o.Reading)
					if o.Reading.Lost != nil {
						tv.Groups[i].RecordsLost += o.Reading.Lost.Records
					}
				}
			}
			tv.Groups[i].States = countStates(rs)
		}
		return tv, nil
	}
	return TopicView{}, fmt.Errorf("topic %s in cluster %s: %w", quote.Clip(topic), quote.Clip(cluster), ErrNotFound)
}

// commitLag is the lag in time of a group's commit on a partition, with
// the group's status there (nil when none). It comes from the table a
// source position's does, at the same instant, so that one offset reads
// the same on the topic and the vertex page (the collector's own table is
// smaller and its figure as old as its poll); the collector's figure
// stands when the store has no table or the lag is unknown.
func (s *picture) commitLag(cluster, group string, gp kafka.GroupPartition, now time.Time) (*readStatus, float64, kafka.TimeLagKind) {
	return s.commitLagOf(s.grpStatus[groupKey{cluster, group}], cluster, gp, now)
}

// commitLagOf is commitLag with the group's status by partition.
func (s *picture) commitLagOf(status map[topicPart]readStatus, cluster string, gp kafka.GroupPartition, now time.Time) (*readStatus, float64, kafka.TimeLagKind) {
	var rs *readStatus
	if r, ok := status[topicPart{gp.Topic, gp.Partition}]; ok {
		rs = &r
	}
	if tt := s.tables[tpKey{cluster, gp.Topic, gp.Partition}]; tt != nil && gp.Lag >= 0 {
		sec, kind := rs.lagSeconds(tt, gp.Committed, now)
		return rs, sec, kind
	}
	return rs, gp.LagSeconds, gp.LagKind
}

// topicAge is the age of a topic's data: as old as its oldest partition
// value.
func topicAge(ks *kafka.Snapshot, t *kafka.Topic, now time.Time) Age {
	at, stale := ks.CollectedAt, false
	for _, p := range t.Partitions {
		if p.Stale {
			stale = true
			if !p.UpdatedAt.IsZero() && p.UpdatedAt.Before(at) {
				at = p.UpdatedAt
			}
		}
	}
	return ageOf(at, now, stale, ks.Err)
}

// clusterAge is the age of a Kafka cluster's data.
func (s *picture) clusterAge(ks *kafka.Snapshot, now time.Time) Age {
	good, ok := s.good[backendKey{"kafka", ks.Cluster}]
	return backendAge(good, ok, ks.CollectedAt, now, ks.Err)
}
