package views

// PlannerPage is the what-if planner (/plan).
type PlannerPage struct {
	Layout
	Form PlannerForm
	// Plan is nil when the input has errors (or is empty).
	Plan *PlanResult
}

// Option is one choice of a select.
type Option struct {
	Value, Label string
	Selected     bool
}

// PlannerForm echoes the input and carries one message per bad field.
type PlannerForm struct {
	Action                              string
	Topics, Rates, State                string
	Parallelism, Target, MaxParallelism string
	// MaxPHint says what an empty max parallelism means, e.g.
	// "Flink default for p=4: 128".
	MaxPHint   string
	MaxPNote   string
	Modes      []Option
	Strategies []Option
	Colors     []Option
	Highlight  string
	// RatesSummary, when set, says how many rates were pasted, and the
	// rates box stays folded under it until opened: the browser lays out
	// every line of a box's text, which takes long for thousands.
	RatesSummary string
	// History is the source's parallelism history, as typed.
	History string
	// Capacity inputs, as typed; CapacityOpen shows them unfolded.
	Busy, Observed, Capacity          string
	KeyedIn, KeyedBusy, KeyedCapacity string
	Utilization                       string
	// Backlog and Retention are the source's backlog per partition and
	// each topic's retention.ms, as typed.
	Backlog, Retention string
	CapacityOpen       bool
	// ObservedAt and Job are kept from a plan filled in from a live job,
	// Sample from a plan with a key sample's key groups.
	ObservedAt, Job, Sample string
	Errors                  map[string]string
}

// Err returns the message for field, or "".
func (f PlannerForm) Err(field string) string { return f.Errors[field] }

// PlanFigure is one headline number, now → target.
type PlanFigure struct {
	ID, Label  string
	Now, Then  string
	Note       string
	Kind       string // computed, given or estimated
	Worse      bool   // the target is worse than now
	Better     bool
	SingleOnly bool // Then only (no "now → target")
}

// PlanResult is everything the planner shows for valid input.
type PlanResult struct {
	// LiveNote says the inputs were filled in from a live job, and when.
	LiveNote string
	// Answer is the recommendation and the verdict on the target shown,
	// at the top of the results, before the grids.
	Answer     PlanAnswer
	Figures    []PlanFigure
	Now, Then  PlanGrid
	Why        []WhySentence
	Strip      KeyGroupStrip
	State      StatePanel
	Moves      MovesPanel
	Candidates CandidatesTable
	Legend     []LegendItem
	Formula    Formula
	Notes      []string
	JSONURL    string
	// Embedded: links that leave the embedded view open a new window.
	Embedded bool
	EmbedURL string
	SelfURL  string
	// Comparison is set when a comparison strategy replaces Flink's.
	Comparison string
	// TooLongForLink explains why SelfURL and EmbedURL are empty.
	TooLongForLink string

	// HighlightNote says that ?highlight= names a subtask or a partition
	// neither layout has, "" otherwise.
	HighlightNote string
}

// Formula is the rule that placed the partitions, with its Flink source.
type Formula struct{ Text, Source string }

// WhySentence is one sentence of the skew explanation. Hot lines are warnings.
type WhySentence struct {
	Text string
	Hot  bool
}

// LegendItem maps a cell colour class to a topic (Name, shown isolated
// from the text around it) or to a rate band (Label).
type LegendItem struct{ Class, Name, Label string }

// PlanGrid is the partition→subtask grid of one parallelism.
type PlanGrid struct {
	ID          string // "now" or "target"
	Title       string
	Parallelism int
	Mode        string // "fresh start", "restore from savepoint at p=4", ...
	Rows        []GridRow
	// Unit is what a row's Load counts: "records/s" or "partitions".
	Unit   string
	Footer string
	// Compact is set for large grids: a row's cells are not elements but
	// codes (GridRow.Codes) that static/js/gridcells.js draws into a
	// canvas, beside the row's partitions as text (GridRow.Parts) for
	// screen readers and pages without script.
	Compact bool
	// Topics are the topic names the codes of a compact grid index, and
	// ByRate says its cells are coloured by rate rather than by topic.
	Topics []string
	ByRate bool
	// MaxParallelism gives a compact grid's script the key-group ranges,
	// which its rows do not spell out.
	MaxParallelism int
	// LoadMax, LoadLow and LoadHigh are the rows' (GridRow), once for
	// a compact grid's script, which draws its load bars.
	LoadMax, LoadLow, LoadHigh float64
	// MaxRate is the highest partition rate (0 without rates): rate band
	// b of 9 holds the rates up to b/9 of it.
	MaxRate float64
	// Key changes whenever anything the grid shows does: the planner
	// script keeps a grid whose key a new rendering repeats.
	Key string
	// Kept: the page that asked has this grid already (with this Key), so
	// only its place is drawn.
	Kept bool
}

// GridRow is one subtask.
type GridRow struct {
	Subtask   int
	Busiest   bool
	Idle      bool
	Highlight bool
	Cells     []Cell
	// Load is the row total (records/s with rates, else partitions) and
	// LoadMax the largest in the grid, for the meter.
	Load, LoadMax float64
	// LoadLow and LoadHigh colour the meter: above LoadHigh it shows as
	// bad (the hot subtasks), below LoadLow as good.
	LoadLow, LoadHigh float64
	LoadText          string
	KeyGroups         string
	// Codes are a compact grid's cells (Cells is then empty): one
	// space-separated code per cell, in the row's order,
	// TOPIC:PARTITION[:BAND[:FLAGS]], with TOPIC an index into
	// PlanGrid.Topics, BAND the rate band (1..9; 0 without a rate) and
	// FLAGS letters: m moves to another subtask, u its owner is not fixed
	// by Flink, h highlighted.
	Codes string
}

// Cell is one partition in a subtask's row.
type Cell struct {
	Label     string // partition number
	Class     string // all classes: colour, and unc/mv for the flags below
	Title     string // full description for hover and screen readers
	Uncertain bool   // owner not determined by Flink's deterministic rules
	Moved     bool   // changes subtask between now and target
}

// KeyGroupStrip shows key-group ranges on a 0..maxP-1 axis, one row per
// parallelism.
type KeyGroupStrip struct {
	MaxParallelism int
	Rows           []StripRow
	FanIn          string
	Uneven         string
}

// StripRow is one parallelism's ranges.
type StripRow struct {
	Label    string
	Segments []Segment
}

// Segment is one subtask's range. X and W are in units of the strip's
// viewBox (0..1000).
type Segment struct {
	Subtask int
	X, W    float64
	Range   string
	Size    int
	Class   string
	Title   string
	Label   bool // wide enough to print its text
	// Whole is a single segment standing for all subtasks (Range holds
	// the summary text).
	Whole bool
}

// StatePanel summarises keyed state movement.
type StatePanel struct {
	Moved, MaxParallelism int
	MovedPercent          string
	BytesKnown            bool
	BytesNote             string
	Rows                  []StateRow
	More                  string
}

// StateRow is what one new subtask restores.
type StateRow struct {
	Subtask   int
	Range     string
	Sources   string // "old 2: 22 key groups · old 3: 21"
	FanIn     int
	Bytes     string
	NonBase   string
	Highlight bool
}

// MovesPanel counts partitions that change subtask under each start mode.
type MovesPanel struct {
	Fresh, Restore       string
	FreshList            []string
	RestoreList          []string
	More                 string
	RestoreUncertain     string
	RestoreApplies       bool
	RestoreNotApplicable string
	// RestoreOnRequest replaces the restore count when the plan did not
	// model a restore (a large fresh start): how to see it.
	RestoreOnRequest string
}

// PlanAnswer is the plan's answer: the recommendation (or why there is
// none) and the verdict on the target the page shows, each with its kind.
type PlanAnswer struct {
	Summary, SummaryKind string
	Target, TargetKind   string
	// Meets is true when the target shown meets the sizing's basis.
	Meets bool
}

// CandidatesTable is the ranked list of parallelisms.
type CandidatesTable struct {
	Caption string
	HasRate bool
	// ByCapacity: candidates are judged by predicted utilisation.
	ByCapacity bool
	// Capacity says what a subtask processes and where that comes from.
	Capacity []KindLine
	// Autoscaler compares the autoscaler's choice with the real layout.
	Autoscaler string
	Rows       []CandidateRow
}

// BusiestLabel is the busiest-subtask column's name, which a stacked
// (phone) row shows beside each figure.
func (c CandidatesTable) BusiestLabel() string {
	if c.ByCapacity {
		return "busiest subtask, share of capacity"
	}
	return "busiest subtask"
}

// KindLine is a sentence with its kind (computed, observed, given,
// estimated).
type KindLine struct {
	Kind, Text string
}

// CandidateRow is one candidate parallelism; P links to the plan with it as
// the target.
type CandidateRow struct {
	P int
	// URL applies the candidate as a link; when it is empty (inputs too
	// long for a link) a button submits Form with apply=P.
	URL  string
	Form string
	// Role says why it is listed ("recommended", "your target", ...).
	Role string
	// Busiest is the busiest subtask's predicted utilisation (by
	// capacity) or load; Verdict the judgement in words.
	Busiest    string
	Verdict    string
	Meets      bool
	Partitions string
	KeyGroups  string
	// Moved is the keyed state that changes subtask.
	Moved    string
	Note     string
	IsTarget bool
}
