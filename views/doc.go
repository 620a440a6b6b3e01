// Package views holds skewscope's templ components and the typed page
// models they render, and computes every page's live parts from its
// model. It does no I/O and no reshaping: package web builds each model
// from a live view (and writes its words); components only lay it out.
//
// # Page models and components
//
// Each page has a model type named for the page with a Page suffix
// (VertexPage, JobPage, OverviewPage, TopicPage, PlannerPage, KeysPage,
// SampleFormPage, …), shaped like its layout, and a component named for
// the page alone in a .templ file (Vertex in vertex.templ, Job in
// job.templ, …); a page's parts are named for what they are on screen
// (PredictionCard, FigureCard, LineagePanel, GridCell, PlanGrid,
// WhySentence, SampleForm's form is SampleFormPage). None shares a name
// with a type of package live, whose views are the facts these models
// are built from. layout.templ is the frame every page shares (Layout).
// Generated *_templ.go files are committed and checked fresh by CI.
//
// # Live pages
//
// A live page's model embeds [Live] and holds its figures as [Text] and
// friends (livemodel.go), each under an id of its own: [UpdateOf] collects
// them into the websocket update the page script applies in place,
// [ChangeSince] turns the next update into what moved since the last (the
// texts that changed, the sparkline samples it adds), and [ShapeOf] hashes the model with its live figures blanked, so
// that a page reloads only when its layout changed (other subtasks,
// partitions, panels). cells.go writes the partition grid's cells, which
// reach tens of thousands, straight to the output.
//
// # Safety
//
// No HTML is built from data in scripts: the page scripts look elements up
// by the ids and data attributes of ids.go and set text only. Names from a
// backend or the configuration go through [Isolate] (bidi.go), so a job
// name cannot reorder the text around it.
package views
