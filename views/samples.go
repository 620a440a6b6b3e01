package views

// SampleFormPage is the key sampler's form: what to read and how the job
// derives its key.
type SampleFormPage struct {
	Action, Cluster, Topic, TopicURL string
	// ListURL lists the running and recent samples; Hashed says keys
	// will be shown as keyed hashes.
	ListURL string
	Hashed  bool
	// The fields as typed.
	Partitions, LastN, Window, Path                   string
	Parallelism, Target, MaxParallelism               string
	MaxRecords, MaxMegabytes, MaxSeconds, Job, Vertex string
	Modes, Froms, Formats, Types                      []Option
	Errors                                            map[string]string
	// SQL opens the Flink SQL key's fields (type sql): the table as its
	// CREATE TABLE statement or column list, the key columns, an Avro
	// schema.
	SQL                       bool
	Table, KeyColumns, Schema string
}

// Err is the message for a field, "" when it is fine.
func (f SampleFormPage) Err(field string) string { return f.Errors[field] }

// SamplePage is a key sample: its progress while it reads, then what
// its keys say.
type SamplePage struct {
	Live
	Cluster, Topic, TopicURL string
	// Spec says how keys are derived, Reading what is read and its limits.
	Spec, Reading string
	// Status and Progress are live while the sample reads: records,
	// bytes and time so far, and the share done (0–1).
	Status       Text
	Progress     Meter
	Running      bool
	CancelAction string
	// Ended says how the sample ended; Error why it failed.
	Ended, Error string
	Done         bool
	// The result.
	Verdict []KindLine
	Figures []KindLine
	TopKeys []SampleKeyRow
	// P and Target are the parallelisms the subtask tables are for.
	P, Target                            int
	Now, AtTarget                        []SampleSubtaskRow
	Errors                               []string
	CSVURL, JSONURL, FormURL, PlannerURL string
	// VertexURL is the keyed vertex page the sample was started from, "" none.
	VertexURL string
	// StartedBy is who started the sample (and when), CancelledBy who
	// cancelled it ("" nobody); ListURL the running and recent samples.
	StartedBy, CancelledBy, ListURL string
	// Hashed says the keys are shown as keyed hashes; KeysNote says how.
	Hashed   bool
	KeysNote string
}

// SamplesPage lists the running and recent key samples.
type SamplesPage struct {
	// Off says why samples are off ("" when they are on); nothing else is
	// shown then.
	Off string
	// Bounds says how many samples may run, in all and per user.
	Bounds string
	Rows   []SampleListRow
}

// SampleListRow is one sample of the list.
type SampleListRow struct {
	URL, Cluster, Topic, StartedBy, State, Progress, Started, Limits string
	// CancelAction is the cancel form's action, "" when the sample is
	// not running.
	CancelAction string
}

// SampleKeyRow is one of the heaviest keys.
type SampleKeyRow struct {
	Key, Count, Share, KeyGroup, Subtask, TargetSubtask string
	Hot                                                 bool
}

// SampleSubtaskRow is one subtask's sampled records.
type SampleSubtaskRow struct {
	Subtask, Records, Share string
	// Bound is the share's bound for the whole topic: three standard
	// errors of the sampled share.
	Bound string
	// Value and Max are the meter's.
	Value, Max string
	Busiest    bool
}
