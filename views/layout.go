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
	// Theme is "light" or "dark" from ?theme=, "" for the viewer's
	// preference.
	Theme string
	// Target is where an embedded page's links and forms open (?target=,
	// default _top), the document's <base target>: it covers every link
	// and form, those its scripts add later included, and a link to a new
	// window has no opener (HTML's rule for _blank). "" on a page of its
	// own and on the planner, whose embedded view keeps its links.
	Target string
	// EmbedJS is the script that posts an embedded page's height to the
	// host page; HeightOrigins the origins it posts to ("self" for the
	// page's own), space-separated; Part what the page shows, named in the
	// message (a vertex page's ?parts=, "why,grid").
	EmbedJS, HeightOrigins, Part string
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

// ColorScheme is the page's color-scheme meta value: the theme asked,
// else both, for the viewer's preference.
func (l Layout) ColorScheme() string {
	if l.Theme != "" {
		return l.Theme
	}
	return "light dark"
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
