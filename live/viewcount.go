package live

import "sync/atomic"

// viewsBuilt counts the page views built (vertex, job, topic and overview
// views), so that a test can tell that a path, such as a /metrics scrape,
// built none.
var viewsBuilt atomic.Uint64

// ViewsBuilt is the number of page views built since the process started.
func ViewsBuilt() uint64 { return viewsBuilt.Load() }
