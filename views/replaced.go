package views

// ReplacedPage is what the replaced-job banner and page say. Package web builds
// it; every URL is complete (route prefix, escaping, ?embed=1).
type ReplacedPage struct {
	// OldID is the replaced job and OldVertex the name of the vertex the
	// link opened ("" for a job link).
	OldID, OldVertex string
	Name             string
	// NewID replaced OldID at AtText (AtISO for <time>); Age is how long
	// ago. NewURL opens its page (its vertex of the same name when the
	// link was to a vertex and it has one).
	NewID, NewURL string
	AtText, AtISO string
	Age           LiveAge
	// CurrentID and CurrentURL name the current run when NewID was itself
	// replaced; "" otherwise.
	CurrentID, CurrentURL string
	// OpenText is the words of the link to NewURL on the page.
	OpenText string
	// VertexNote says when the successor has no vertex of the old name.
	VertexNote string
	// StableURL is the by-name link to the current run, StableText its
	// path with the names unescaped, to read.
	StableURL, StableText string
}
