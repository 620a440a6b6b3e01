package views

// Layout is what every page shares.
type Layout struct {
	Title string
	// Base is the route prefix ("" or "/skewscope"); every link starts with it.
	Base string
	// Nav is the active navigation entry: "home", "plan", "keys" or
	// "samples".
	Nav string
	// Embed drops navigation and chrome (?embed=1).
	Embed bool
	// CSS, JS and Icon are the hashed asset URLs.
	CSS, JS, Icon string
	// ChartCSS is the vendored chart library's stylesheet, on live pages.
	ChartCSS string
	// Version is shown in the footer.
	Version string
	// Sandbox is true when the built-in sandbox feeds the live pages.
	Sandbox bool
	// Samples is true when key samples can be listed (a Kafka cluster is
	// configured): the navigation then links to them.
	Samples bool
}

// URL joins the route prefix and a path that starts with "/".
func (l Layout) URL(path string) string { return l.Base + path }

type navItem struct{ id, path, label string }

var navItems = []navItem{
	{"home", "/", "Overview"},
	{"plan", "/plan", "Planner"},
	{"keys", "/keys", "Key lookup"},
	{"samples", "/samples", "Key samples"},
}

// shown reports whether the navigation shows n.
func (l Layout) shown(n navItem) bool { return n.id != "samples" || l.Samples }
