// Package web serves skewscope: its pages, its JSON API (/api/v1, described
// by openapi.json), its websocket of live updates, /metrics, and the
// operational endpoints. Every route is listed in routes.go; NewServer
// builds a [Server] and [Server.Run] runs what it runs beside the routes
// (the live publisher, the websocket hub, the key sampler).
//
// # Where a figure comes from, where it is worded, where it is shaped
//
// A live figure is computed in package live: the collectors hand the
// [live.Store] their snapshots, the store publishes a [live.State] after
// every update, and every view of a job, a vertex, a topic or the overview
// is a function of one State (numbers with their provenance and typed
// kinds; that is the JSON API). This package writes every word: the
// builders in livepages.go and the sentences of livetext.go turn a view
// into a page model of package views, and views.UpdateOf and views.ShapeOf
// turn that model into a websocket update and the shape that tells a page
// to reload. A request reads one State for all it shows, and so does a
// publishing round.
//
// # Reading this package
//
//   - Live pages: live.go (the handlers), livepages.go (view → page model),
//     livetext.go and explain.go (their sentences), why.go (the "why is it
//     hot?" panel), replaced.go (links that survive restores), parts.go and
//     gridquery.go (what a URL picks of a page).
//   - Live updates: publish.go (one round per store update, rebuilding only
//     the pages whose job or cluster changed), livetopics.go (the websocket
//     topics), hub.go (the sockets, their bounds and slow-client drops).
//   - The planner: planner.go, planinput.go, plangrid.go, plansizing.go,
//     planexplain.go and planapi.go render what package plan computes;
//     planlive.go opens it from a live vertex.
//   - Keys: keys.go (key lookup), samples.go, samplepages.go and
//     sampleaccess.go (key samples: the forms, the pages, who may read
//     keys; the sampler's manager in collectors/kafka/sample owns the
//     samples themselves).
//   - /metrics: metrics.go (the families and what they export) and
//     metricstext.go (the text format, written from the State's facts).
//   - Safety: middleware.go (headers, CSP), hosts.go (Host policy), api.go
//     and ops.go (limits and timeouts), errors.go and params.go (bad input
//     answered with the parameter it names).
//
// Tests render pages and query them (goquery) by data-testid, drive the
// websocket with gorilla's client, and, under the browser build tag, load
// the pages in Chromium; the stores they read are built from real
// collector snapshots or the sandbox, never mocks of the store.
package web
