package views

// Element ids and data attributes that the page scripts look up. The
// components use these constants and static/js/ids.js, which
// TestScriptIDsModule writes from ScriptIDs (go test ./views -run
// TestScriptIDsModule -update), holds the same strings for the scripts; the
// test fails when the two differ.
const (
	// IDPlanForm is the planner's form and IDPlanResults its results,
	// which the planner script swaps in from a fresh rendering.
	IDPlanForm    = "plan-form"
	IDPlanResults = "plan-results"
	// IDMaxPField is the planner's max parallelism input and IDMaxPHint
	// its hint, which follow the other inputs.
	IDMaxPField = "f-maxp"
	IDMaxPHint  = "maxp-hint"

	// AttrErrorFor marks a field's inline message with the field's name.
	AttrErrorFor = "data-error-for"
	// AttrLiveTopic marks a live page's root with its websocket topic and
	// AttrShape with its shape; AttrLive names an element an update
	// addresses; AttrLiveState shows the websocket's state; AttrAge marks
	// an age that the page counts up from AttrAt (Unix ms); AttrSpark holds
	// a sparkline's samples, AttrSparkMax the top of its y range and
	// AttrSparkAxis (on its table's column head) its samples' times.
	AttrLiveTopic = "data-live-topic"
	AttrShape     = "data-shape"
	AttrLive      = "data-live"
	AttrLiveState = "data-live-state"
	AttrAge       = "data-age"
	AttrAt        = "data-at"
	AttrSpark     = "data-spark"
	AttrSparkMax  = "data-spark-max"
	AttrSparkAxis = "data-spark-axis"

	// AttrGridKey is a planner grid's key (views.GridView.Key). A compact
	// grid's table names its topics in AttrTopics and what colours its
	// cells in AttrColorBy; each row's cells are codes in AttrCells.
	AttrGridKey = "data-grid-key"
	// AttrKept marks the place of a grid the server left out because the
	// page that asked has it (views.GridView.Kept).
	AttrKept    = "data-kept"
	AttrTopics  = "data-topics"
	AttrColorBy = "data-color"
	AttrCells   = "data-cells"

	// On an embedded page's body, AttrHeightOrigins is the origins its
	// height is posted to and AttrPart what it shows (see
	// static/js/embed.js).
	AttrHeightOrigins = "data-height-origins"
	AttrPart          = "data-part"
)

// ScriptIDs are the names static/js/ids.js exports, with their values.
var ScriptIDs = []struct{ Name, Value string }{
	{"planForm", IDPlanForm},
	{"planResults", IDPlanResults},
	{"maxpField", IDMaxPField},
	{"maxpHint", IDMaxPHint},
	{"errorFor", AttrErrorFor},
	{"liveTopic", AttrLiveTopic},
	{"shape", AttrShape},
	{"live", AttrLive},
	{"liveState", AttrLiveState},
	{"age", AttrAge},
	{"at", AttrAt},
	{"spark", AttrSpark},
	{"sparkMax", AttrSparkMax},
	{"sparkAxis", AttrSparkAxis},
	{"gridKey", AttrGridKey},
	{"kept", AttrKept},
	{"topics", AttrTopics},
	{"colorBy", AttrColorBy},
	{"cells", AttrCells},
	{"heightOrigins", AttrHeightOrigins},
	{"part", AttrPart},
}
