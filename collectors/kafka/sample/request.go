package sample

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/skewscope/skewscope/collectors"
)

// Modes of a [Request].
const (
	// ModeLast reads the last LastN records of each partition, up to the
	// end offsets read when the sample starts.
	ModeLast = "last"
	// ModeLive reads the records produced during the next Window, from the
	// end offsets read when the sample starts.
	ModeLive = "live"
)

// Defaults applied by [Limits.WithDefaults] to zero fields.
const (
	DefaultMaxRecords     = 1_000_000
	DefaultMaxBytes       = 256 << 20 // 256 MiB
	DefaultMaxTime        = 30 * time.Second
	DefaultMaxRecordBytes = 1 << 20 // 1 MiB, Kafka's default max.message.bytes
)

// Hard caps: [Limits.Validate] refuses anything larger.
const (
	MaxRecordsCap     = 10_000_000
	MaxBytesCap       = 1 << 30 // 1 GiB
	MaxTimeCap        = 10 * time.Minute
	MaxRecordBytesCap = 1 << 20 // 1 MiB
)

// Request says what to sample.
type Request struct {
	Topic string
	// Partitions to read; nil means every partition of the topic.
	Partitions []int32
	// Mode is [ModeLast] or [ModeLive].
	Mode string
	// LastN is the number of records per partition in mode "last": the
	// sample reads from max(log start, end−LastN) to the end offset, both
	// as listed at the start.
	LastN int64
	// Window is how long mode "live" reads, counted from when the end
	// offsets it starts at were listed.
	Window time.Duration
	Limits Limits
}

// Limits bound a sample; the first one reached stops it. Zero fields take
// the defaults (see [Limits.WithDefaults]).
type Limits struct {
	MaxRecords int64         // MaxRecords delivered; default 1,000,000, at most 10,000,000.
	MaxBytes   int64         // MaxBytes of delivered records (see [Record.Size]); default 256 MiB, at most 1 GiB.
	MaxTime    time.Duration // MaxTime from the call of Sample; default 30 s (mode "live": Window + 30 s), at most 10 min.
	// MaxRecordBytes is the largest record delivered: larger records are
	// counted in [Progress.Skipped] and not delivered. Default and cap 1 MiB.
	MaxRecordBytes int
}

// WithDefaults returns r with zero limits set to their defaults.
func (r Request) WithDefaults() Request {
	if r.Mode == ModeLive && r.Limits.MaxTime == 0 && r.Window > 0 {
		// The default leaves the window the time to list the offsets.
		r.Limits.MaxTime = min(MaxTimeCap, r.Window+DefaultMaxTime)
	}
	r.Limits = r.Limits.WithDefaults()
	return r
}

// WithDefaults returns l with zero fields set to their defaults.
func (l Limits) WithDefaults() Limits {
	if l.MaxRecords == 0 {
		l.MaxRecords = DefaultMaxRecords
	}
	if l.MaxBytes == 0 {
		l.MaxBytes = DefaultMaxBytes
	}
	if l.MaxTime == 0 {
		l.MaxTime = DefaultMaxTime
	}
	if l.MaxRecordBytes == 0 {
		l.MaxRecordBytes = DefaultMaxRecordBytes
	}
	return l
}

// Validate reports every problem with r as [collectors.FieldErrors], each
// at its field (topic, mode, lastN, window, partitions, limits.maxBytes).
// Zero limits are valid: they take the defaults.
func (r Request) Validate() error {
	var errs collectors.FieldErrors
	if strings.TrimSpace(r.Topic) == "" {
		errs.Add("topic", "must not be empty")
	}
	switch r.Mode {
	case ModeLast:
		if r.LastN <= 0 {
			errs.Add("lastN", "must be positive in mode %q, got %d", ModeLast, r.LastN)
		} else if r.LastN > MaxRecordsCap {
			errs.Add("lastN", "%d is over the cap %d", r.LastN, MaxRecordsCap)
		}
		if r.Window != 0 {
			errs.Add("window", "is for mode %q, not %q", ModeLive, ModeLast)
		}
	case ModeLive:
		if r.Window <= 0 {
			errs.Add("window", "must be positive in mode %q, got %v", ModeLive, r.Window)
		} else if r.Window > MaxTimeCap {
			errs.Add("window", "%v is over the cap %v", r.Window, MaxTimeCap)
		} else if mt := r.WithDefaults().Limits.MaxTime; r.Window > mt {
			errs.Add("window", "%v is longer than limits.maxTime %v", r.Window, mt)
		}
		if r.LastN != 0 {
			errs.Add("lastN", "is for mode %q, not %q", ModeLast, ModeLive)
		}
	default:
		errs.Add("mode", "must be %q or %q, got %q", ModeLast, ModeLive, r.Mode)
	}
	if r.Partitions != nil && len(r.Partitions) == 0 {
		errs.Add("partitions", "empty list (nil means every partition)")
	}
	for i, p := range r.Partitions {
		if p < 0 {
			errs.Add(fmt.Sprintf("partitions[%d]", i), "must not be negative, got %d", p)
		} else if slices.Index(r.Partitions, p) < i {
			errs.Add(fmt.Sprintf("partitions[%d]", i), "partition %d given twice", p)
		}
	}
	r.Limits.validate(&errs, "limits.")
	return errs.Err()
}

// Validate reports every problem with l as [collectors.FieldErrors] at its
// field (maxRecords, maxBytes, maxTime, maxRecordBytes).
func (l Limits) Validate() error {
	var errs collectors.FieldErrors
	l.validate(&errs, "")
	return errs.Err()
}

func (l Limits) validate(errs *collectors.FieldErrors, prefix string) {
	check := func(field string, v, limit int64, unit string) {
		switch {
		case v < 0:
			errs.Add(prefix+field, "must not be negative, got %d", v)
		case v > limit:
			errs.Add(prefix+field, "%d%s is over the cap %d%s", v, unit, limit, unit)
		}
	}
	check("maxRecords", l.MaxRecords, MaxRecordsCap, "")
	check("maxBytes", l.MaxBytes, MaxBytesCap, " bytes")
	check("maxRecordBytes", int64(l.MaxRecordBytes), MaxRecordBytesCap, " bytes")
	switch {
	case l.MaxTime < 0:
		errs.Add(prefix+"maxTime", "must not be negative, got %v", l.MaxTime)
	case l.MaxTime > MaxTimeCap:
		errs.Add(prefix+"maxTime", "%v is over the cap %v", l.MaxTime, MaxTimeCap)
	}
}
