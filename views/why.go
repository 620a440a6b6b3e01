package views

// WhyPanel is a live vertex's "why is it hot?": the causes its figures
// support, hottest first.
type WhyPanel struct {
	// Calm is true when no line is a warning: nothing stands out, or
	// nothing can be said yet.
	Calm   bool
	Causes []WhyCause
}

// WhyCause is one line of the panel: its sentences, each with the
// provenance of its figures, and a link to the planner on this cause.
type WhyCause struct {
	// Kind is the line's kind (live.Why*), for tests and styling.
	Kind string
	Hot  bool
	// Subtasks are the line's subjects ("3"), for the highlighted row.
	Subtasks []string
	// Clauses are the line's sentences in order.
	Clauses []WhyClause
	// Planner opens the planner with the measured rates (and, in its
	// text, the parallelism that removes the cause); nil when none.
	Planner *Anchor
	// PlannerKind is the provenance of the figure in the link's text,
	// "" when it names none.
	PlannerKind string
	// Fresh opens the planner at a fresh start that removes the cause when
	// no restore does, labelled as one; nil when none.
	Fresh *Anchor
}

// WhyClause is one sentence of a line. Kind is observed, computed or
// estimated, "" for a sentence without a figure.
type WhyClause struct {
	Kind string
	Text Text
}
