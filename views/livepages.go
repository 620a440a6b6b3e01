package views

// The models of the live pages. Package web builds them from the store's
// views (newOverviewPage, newJobPage, newVertexPage, newTopicPage): every
// text is written, every URL complete and every class decided there, so
// that the components only lay them out and UpdateOf finds the live
// figures in them.

// Anchor is a text with the URL it opens.
type Anchor struct{ Text, URL string }

// LiveBar is the live indicator: the websocket state and the age of the
// page's data; a vertex page also shows the age of the Kafka offsets it
// joins (Kafka non-nil).
type LiveBar struct {
	Stale bool
	// State is the initial websocket state text, "live" or "stale".
	State    string
	Flink    LiveAge
	Kafka    *LiveAge
	Err      string
	KafkaErr string
}

// BackendCell is the data-age cell of a backend's overview row: its
// state when not ok, and the age of its latest poll (none before the first
// poll ended: NotPolled).
type BackendCell struct {
	NotPolled bool
	// State is the backend's state when it is not ok ("failing", "never
	// reached"), "" when ok.
	State string
	Age   LiveAge
	Err   string
}

// OverviewPage is the overview: Flink endpoints, jobs, Kafka clusters and
// topics.
type OverviewPage struct {
	Live
	Endpoints []EndpointRow
	Jobs      []JobRow
	Clusters  []ClusterRow
	Topics    []TopicRow
}

// EndpointRow is a Flink endpoint on the overview.
type EndpointRow struct {
	Name, URL, Version string
	Stale              bool
	Jobs               string
	// Dropped says how many finished jobs the endpoint lists beyond
	// maxJobs, left out; "" when none.
	Dropped            Text
	Poll, Cost, Budget Text
	Backoff            Text
	State              BackendCell
}

// JobRow is a job on the overview. A replaced job links to its successor
// (ReplacedBy) where others show their assignment (Drift).
type JobRow struct {
	Name, ID, URL, State, Vertices string
	// Concern says how urgently the job needs a look, in words, and Level
	// is its colour step (0–3, a Meter whose element takes data-level);
	// Focus links to the vertex and subtask it is about, nil when the job
	// is ok. LagTime is its furthest-behind source subtask's lag time with
	// its trend, LagStep that time's colour step on the cells' scale.
	Concern                    Text
	Level                      Meter
	Focus                      *Anchor
	LagTime                    Text
	LagStep                    Meter
	Lag, MaxBusy, Backpressure Text
	// Lost is the records its sources lost (deleted unread), Lossy set
	// when some were.
	Lost       Text
	Lossy      bool
	Drift      *Text
	ReplacedBy *Anchor
	// Stale is set while the job's data is not from the latest poll (its
	// endpoint failing, or its details); DataAge is then its age.
	Stale   bool
	DataAge LiveAge
	// Unlisted says that the endpoint's latest job list left the job out
	// ("" when it did not).
	Unlisted string
	// Earlier are the runs this one replaced, and the ended runs of its
	// name, folded under it.
	Earlier []EarlierRun
	// FlinkUI is the job's page in the Flink Web UI, "" when there is none.
	FlinkUI string
}

// EarlierRun is a replaced or ended run folded under the job's current
// run on the overview.
type EarlierRun struct {
	ID, URL, State string
	// Note says what became of it ("replaced by …", "ended"), Lost the
	// records its sources lost, "" when none.
	Note, Lost string
}

// ClusterRow is a Kafka cluster on the overview.
type ClusterRow struct {
	Name               string
	Stale              bool
	Topics, Partitions string
	Groups             string
	Produced, Poll     Text
	State              BackendCell
}

// TopicRow is a watched topic on the overview.
type TopicRow struct {
	Name, URL, Cluster, Partitions, Groups string
	// KafkaUI is the topic's page in a Kafka UI, "" when there is none.
	KafkaUI  string
	Produced Text
	// Stale is set while the topic's data is not from the latest poll of
	// its cluster; DataAge is then its age.
	Stale   bool
	DataAge LiveAge
}

// JobPage is a job's vertices at a glance.
type JobPage struct {
	Live
	Replaced *ReplacedPage
	// Ended says the job has ended and its figures are the last Flink
	// reported; "" for a running job.
	Ended              string
	Endpoint, Name, ID string
	State              string
	// Restarts is Flink's numRestarts as a text, "" when unknown.
	Restarts string
	// FlinkUI is the job's page in the Flink Web UI, "" when there is none.
	FlinkUI  string
	Bar      LiveBar
	Restored string
	// Watermark says where the job's watermark stands and what holds it
	// back; nil when the job reports no event time.
	Watermark *Text
	Vertices  []JobVertexRow
}

// JobVertexRow is a vertex on the job page.
type JobVertexRow struct {
	Name, URL, Parallelism, MaxParallelism, Kind string
	// Concern and Level are the vertex's concern in words and its colour
	// step, as on the overview; LagTime its furthest-behind subtask's lag
	// time with its trend, and LagStep that time's step.
	Concern, LagTime                        Text
	Level, LagStep                          Meter
	Skew, Busiest, Backpressure, Lag, Drift Text
	// Watermark is the vertex's lowest watermark, "–" without event time.
	Watermark Text
	// Lost is the records the source lost (deleted unread), Lossy set when
	// some were.
	Lost  Text
	Lossy bool
}

// VertexPage is a live source or keyed vertex.
type VertexPage struct {
	Live
	Replaced *ReplacedPage
	// Watermark says where the vertex's watermark stands and what holds
	// it back; nil when the job reports no event time.
	Watermark *Text
	// Ended says the job has ended and the figures are the last Flink
	// reported; "" for a running job.
	Ended string
	// Withheld says what Flink withheld of the source's metrics, why, and
	// which setting governs it; "" when nothing.
	Withheld string
	Cluster  string
	Job      Anchor
	Name     string
	// Parallelism and MaxParallelism are texts; MaxParallelism is shown
	// for keyed vertices only ("" otherwise).
	Parallelism, MaxParallelism string
	Group                       *Group
	Topics                      []Anchor
	// Peers link to the job's vertices of the other kind (a source's keyed
	// vertices, a keyed vertex's Kafka sources), keeping the highlight.
	Peers          []PeerLink
	Bar            LiveBar
	Error          string
	Restored       string
	Figures        []FigureCard
	Prediction     *PredictionCard
	Why            *WhyPanel
	Lineage        *LineagePanel
	SandboxRestore *SandboxRestore
	// Grid is a Kafka source's partitions by subtask; Table the subtasks
	// of any other vertex. One of them is set.
	Grid  *SourceGrid
	Table *SubtaskTable
	// LagMethod says how lag is measured, and what the reader states and
	// the time to catch up mean (Kafka sources).
	LagMethod bool
	Links     VertexLinks

	// HighlightNote says that the page's ?highlight= names a subtask or a
	// partition the vertex does not have, "" otherwise.
	HighlightNote string
	// Brief is the first screen's answer, nil on an embedded page; Worst
	// is the subtask that needs a look most ("" none), part of the page's
	// layout so that a new worst subtask renders a new brief.
	Brief *Brief
	Worst string
	// Parts name the sections an embedded page shows, in the order it
	// shows them ("grid", "why", "figures", "lineage"); nil for every
	// section in the page's own order.
	Parts []string
	// SQL says which Flink SQL key the vertex is keyed by, as the job
	// plan names it; nil when it runs no keyed SQL operator.
	SQL *SQLKeyNote
}

// SQLKeyNote is a keyed vertex's Flink SQL key: its columns (one list per
// keyed input), the operator, what is not known and where to route keys.
type SQLKeyNote struct {
	// Columns are the key columns per keyed input, each list as it is
	// typed ("user_id", "account_id, region"); empty when the plan does
	// not name them.
	Columns []string
	// Inputs name the keyed inputs of Columns ("left", "right") when
	// there are several, else nil.
	Inputs []string
	// Origins say, per entry of Columns, where columns that are not the
	// table's own come from ("user_id of clicks" for a column a subquery
	// renamed, "computed upstream as LOWER(user_id)"); "" for none.
	Origins  []string
	Operator string
	// Note says what follows from the operator: how a SQL key is hashed,
	// that the key is not named, or what a two-phase aggregation's local
	// half absorbs.
	Note string
	// Lookup opens the key lookup with the key's columns filled in ("" when
	// the key is not named).
	Lookup string
}

// Brief answers, above everything else on a vertex page, what is wrong:
// the subtask that needs a look (the link's highlighted one, else the
// vertex's worst) in one line, its cause, and the one action. Its
// figures are copies of that subtask's row, updated with it; a copy with
// no key is a figure of a row the grid does not show, as rendered.
type Brief struct {
	// Subtask names the subject, "" when no subtask needs a look; Row is
	// its row's element id, "" when the grid does not show it, and From
	// says why it is the subject ("highlighted by the link", "the worst
	// of 4").
	Subtask, Row, From string
	// Level is a copy of the row's colour step (its value in Text), and
	// Concern of its concern in words.
	Level, Concern Copy
	// Keyed subjects have no lag: Busy, In and BackPressured say how the
	// subtask does; a source's have the others.
	Lag, LagTime, Lost, LostWhen, CatchUp Copy
	Busy, In, BackPressured               Copy
	Why                                   []WhyCopy
	// Action is the one thing to do (the why panel's plan for the
	// subject, else "plan a rescale"), ActionKind the provenance of the
	// figure its text names; nil when none applies.
	Action     *Anchor
	ActionKind string
	// Calm says that no subtask needs a look, "" otherwise.
	Calm string
}

// PeerLink is another vertex of the job: Kind is "keyed vertex" or
// "source".
type PeerLink struct{ Kind, Name, URL string }

// Group is the consumer group a source commits to and how skewscope found
// it.
type Group struct {
	Name, How string
	// KafkaUI is the group's page in its cluster's Kafka UI, "" when none.
	KafkaUI string
}

// FigureCard is a headline figure with its provenance.
type FigureCard struct {
	Label string
	// Kind is observed, estimated or computed.
	Kind string
	Text Text
	Note Text
	// Level is the figure's colour step on the cells' scale (records
	// lost, lag time, a partition state that loses): the card takes it as
	// data-level.
	Level Meter
}

// PredictionCard compares the observed assignment with Flink's formulas.
type PredictionCard struct {
	Drift bool
	// Kind is the headline's verdict, KindClass its class.
	Kind, KindClass string
	// Summary and Counts are the verdict in words and its partitions'
	// verdicts; live, as the rows' marks are, so that they never disagree.
	Summary, Counts Text
	// History is the parallelism history line, "" when none. History,
	// Notes and Source explain the model; an embedded page has none.
	History string
	Notes   []string
	Source  string
}

// Explained reports whether the prediction says how it was modelled.
func (p PredictionCard) Explained() bool {
	return p.History != "" || len(p.Notes) > 0 || p.Source != ""
}

// LineagePanel is a source's parallelism history with its events.
type LineagePanel struct {
	Intro  string
	Events []LineageRow
}

// LineageRow is one lineage event.
type LineageRow struct {
	Kind, When, Event string
	Job               Anchor
	From, Moved       string
	// Cause is a failover's root cause from Flink's exception history
	// (observed), "" when none is known.
	Cause string
}

// SandboxRestore is the sandbox's restore form on a source's page.
type SandboxRestore struct {
	Action, Job, Parallelism string
}

// VertexLinks are the URLs a vertex page links to, built by the handler.
type VertexLinks struct {
	JSON, Planner, ColorLag, ColorRate, Highlight string
	// ColorWatermark colours the grid by event-time lag; shown when the
	// vertex has event time (VertexPage.Watermark).
	ColorWatermark string
	// PlanRescale opens the planner filled in with the job's observed
	// rates, busy ratios, state sizes and history ("" for vertices that
	// are neither a Kafka source nor keyed).
	PlanRescale string
	// Samples open the key sampler on each topic the job reads, for a
	// keyed vertex.
	Samples []Anchor
	// Embed is the page's embeddable URL, "" on an embedded page; Full is
	// the page of its own that an embedded page links to, "" otherwise.
	Embed, Full string
	// FlinkUI is the vertex's page in the Flink Web UI, and FlinkSubtask
	// the highlighted subtask's page there ("" and nil when none).
	FlinkUI      string
	FlinkSubtask *Anchor
}

// SourceGrid is a Kafka source's subtasks with their partitions.
type SourceGrid struct {
	// Color is what cells are coloured by, "lag", "rate" or "event-time
	// lag"; ByRate is Color == "rate".
	Color  string
	ByRate bool
	// EventTime shows each row's Watermark: the job reports watermarks.
	EventTime bool
	// Legend are the texts of colour levels 0–3; LegendNote follows them,
	// "" when they say it all (by lag: the records steps of the cells whose
	// time behind is unknown).
	Legend     [4]string
	LegendNote string
	// Labels say which topic each cell label's letters stand for, and
	// Values what the number under the label is.
	Labels []CellLabel
	Values string
	// SparkAxis is the times of the rows' sparklines (on the lag column's
	// head) and SparkWindow the span they cover ("last 15 min"), under
	// the lag and the rate sparklines' heads.
	SparkAxis   Spark
	SparkWindow [2]Text
	// Controls are the rows' order and filter, nil on an update.
	Controls *GridControls
	// Empty says why no row is shown, "" when some are.
	Empty string
	Rows  []SourceRow
}

// GridControls sort and filter a source grid's rows with a plain GET form
// (Hidden keeps the page's other parameters), say when the rows were
// sorted (Order, "" by subtask) with a link that sorts them again, how
// many are shown (Shown, "" all), and link to the busiest shown subtask.
type GridControls struct {
	Action                string
	Hidden                []Field
	Sorts, Topics         []Option
	Subtasks, Placeholder string
	Order, Resort         string
	Shown                 string
	Busiest               *Anchor
}

// Field is a form's hidden input.
type Field struct{ Name, Value string }

// CellLabel is a topic's prefix in the cells' labels ("o" for orders).
type CellLabel struct{ Prefix, Topic string }

// SourceRow is one subtask of a Kafka source.
type SourceRow struct {
	Subtask, ID      string
	Highlight, Drift bool
	// Lossy marks a subtask whose partitions lost records (deleted unread).
	Lossy            bool
	Cells            []GridCell
	Rate, RecordsOut Text
	Lag, LagTime     Text
	// Lost is the records its partitions lost, "" when none, and
	// LostWhen between which polls skewscope saw them deleted; CatchUp
	// its time to catch up.
	Lost, LostWhen, CatchUp Text
	// Concern is how urgently the subtask needs a look, in words, and
	// Level its colour step (the element takes it as data-level).
	Concern             Text
	Level               Meter
	Busy                Meter
	BusyText            Text
	SparkLag, SparkRate Spark
	Vs                  Text
	// Watermark is the subtask's output watermark and its lag, and
	// SparkWatermark its recent event-time lag, shown with
	// SourceGrid.EventTime.
	Watermark      Text
	SparkWatermark Spark
	// Why repeats, under the highlighted row, the why panel's line about
	// its subtask, so that a link from an alert shows the row and its
	// cause together; nil on other rows.
	Why []WhyCopy
}

// WhyCopy is a sentence of the why panel shown again under a row, with
// the provenance of its figures.
type WhyCopy struct {
	Kind string
	Text Copy
}

// GridCell is one partition in a subtask's row: its label, its
// colour level, its lag or rate, its reader state and its title.
type GridCell struct {
	Topic, Partition, Label string
	// Title is what does not change while the page's shape does (the
	// partition, its prediction, its ownership); Live.Title the reading
	// of its reader, on the cell's figure, "" when there is nothing to say.
	Title string
	// Miss marks a partition found elsewhere than predicted, Uncertain one
	// whose owner is not determined; Highlight the partition a link marks;
	// Lost one that lost records (deleted before the source read them).
	Miss, Uncertain, Highlight, Lost bool
	// Predicted is the subtask the model puts it on, -1 when none: the
	// title names it, so it is part of the page's shape. (An int32 beside
	// the flags: a page has thousands of cells.)
	Predicted int32
	Live      LiveCell
}

// SubtaskTable is the subtasks of a vertex that is not a Kafka source.
type SubtaskTable struct {
	Keyed bool
	// EventTime shows each row's Watermark and SparkWatermark: the job
	// reports watermarks. SparkAxis is the times of the sparklines and
	// SparkWindow the span they cover.
	EventTime   bool
	SparkAxis   Spark
	SparkWindow Text
	// Checkpoint says which checkpoint the state and checkpoint columns
	// are of, and how old they are.
	Checkpoint Text
	// Strip is the key-group strip of a keyed vertex, nil otherwise.
	Strip  *KeyGroupBar
	Rows   []SubtaskTableRow
	Lookup *KeyLookupForm
}

// KeyGroupBar is a keyed vertex's key groups as one strip of segments.
type KeyGroupBar struct {
	Label    string
	Segments []KeyGroupSegment
}

// KeyGroupSegment is one subtask's key-group range in the strip.
type KeyGroupSegment struct {
	Class, Title, X, Width string
	// Label is the subtask's number, "" when the segment is too narrow.
	Label string
	// Highlight marks the subtask a link highlights.
	Highlight bool
}

// SubtaskTableRow is a subtask of a vertex that is not a Kafka source.
type SubtaskTableRow struct {
	Subtask, ID string
	Highlight   bool
	// KeyGroups is "0–63" and KeyGroupSize "(64)", "" when not keyed.
	KeyGroups, KeyGroupSize string
	In, Out                 Text
	Busy                    Meter
	BusyText, BackPressured Text
	State                   Text
	// Concern and Level are the subtask's, as a source row's.
	Concern Text
	Level   Meter
	// Checkpoint, Alignment and StartDelay are the subtask's checkpoint
	// duration (sync + async), alignment time and start delay in the
	// checkpoint of SubtaskTable.Checkpoint. Slowest marks the subtask
	// whose checkpoints stand out.
	Checkpoint, Alignment, StartDelay Text
	Slowest                           bool
	// Watermark is the subtask's input watermark (its output for a
	// source) and its lag, and SparkWatermark its recent event-time lag,
	// shown with SubtaskTable.EventTime.
	Watermark      Text
	SparkWatermark Spark
}

// KeyLookupForm asks which subtask handles a key, with the vertex's
// parallelism.
type KeyLookupForm struct {
	Action, Parallelism, MaxParallelism string
	// SQL is set for a Flink SQL vertex: the key is a key row, and
	// Columns its key columns as the plan names them, for the user to
	// give their types.
	SQL     bool
	Columns string
}

// TopicPage is a topic's partitions with every group's lag.
type TopicPage struct {
	Live
	Cluster, Name, Partitions string
	// SampleURL opens the key sampler on the topic ("" when it cannot run).
	SampleURL string
	// KafkaUI is the topic's page in a Kafka UI, "" when there is none.
	KafkaUI  string
	Produced Text
	// Retention is the topic's retention settings in words and
	// RetentionAge when they were read, observed; "" texts before the
	// first read (then the line is not shown).
	Retention, RetentionAge Text
	Bar                     LiveBar
	Error                   string
	Groups                  []TopicGroupHead
	// States explain the group states shown, once each.
	States []string
	Rows   []TopicTableRow
}

// TopicGroupHead is a group with commits on the topic, with its state
// ("–" unknown) and what the state means (its title), its partitions'
// reader states and the records it lost ("" none; Lossy set when some).
type TopicGroupHead struct {
	Name, State, Title string
	// KafkaUI is the group's page in a Kafka UI, "" when there is none.
	KafkaUI       string
	Readers, Lost Text
	Lossy         bool
}

// TopicTableRow is one partition of a topic page.
type TopicTableRow struct {
	Partition  string
	Stale      bool
	Start, End Text
	Produced   Text
	Groups     []GroupLag
}

// GroupLag is a group's commit lag on a partition, in offsets and in
// time, and how its commits do (Reader: state and records lost; Lost set
// when it lost some).
type GroupLag struct {
	Lag, LagTime, Reader Text
	Lost                 bool
}

// liveCells is how many live cells the page's grid holds, for UpdateOf to
// make room for them at once.
func (p VertexPage) liveCells() int {
	if p.Grid == nil {
		return 0
	}
	n := 0
	for _, r := range p.Grid.Rows {
		n += len(r.Cells)
	}
	return n
}

// GroupLabel names the column of the i-th group's figures on a stacked
// (phone) row, where the table's column heads are not shown: "enrich ·
// commit lag", or "commit lag" when the topic has one group (its name
// heads the cards).
func (p TopicPage) GroupLabel(i int, column string) string {
	if i < 0 || i >= len(p.Groups) || len(p.Groups) == 1 {
		return column
	}
	return p.Groups[i].Name + " · " + column
}
