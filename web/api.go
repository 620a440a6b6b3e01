package web

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/skewscope/skewscope/assign"
	"github.com/skewscope/skewscope/internal/quote"
	"github.com/skewscope/skewscope/strategy"
)

// API limits, documented in the README and the OpenAPI description.
const (
	// MaxBulkKeys is the most keys one POST /api/v1/keygroup may carry.
	MaxBulkKeys = 100_000
	// MaxBulkBody is the largest request body the bulk endpoint reads.
	MaxBulkBody = 16 << 20
	// MaxTopicsPerQuery bounds the topic parameters of /api/v1/assignment.
	MaxTopicsPerQuery = 1000
	// MaxPartitionsPerQuery bounds the total partitions of one assignment
	// query, so one request cannot make the server build millions of rows.
	MaxPartitionsPerQuery = 100_000
)

// serveAPIMethodNotAllowed answers a method an API path does not take,
// naming in Allow the methods it does (RFC 9110 §15.5.6).
func (s *Server) serveAPIMethodNotAllowed(w http.ResponseWriter, r *http.Request) error {
	if rctx := chi.RouteContext(r.Context()); rctx != nil && rctx.Routes != nil {
		var allow []string
		for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
			if rctx.Routes.Match(chi.NewRouteContext(), m, r.URL.Path) {
				allow = append(allow, m)
				if m == http.MethodGet {
					allow = append(allow, http.MethodHead) // HEAD is answered as GET
				}
			}
		}
		if len(allow) > 0 {
			w.Header().Set("Allow", strings.Join(allow, ", "))
		}
	}
	return &inputError{Status: http.StatusMethodNotAllowed, Msg: "method " + r.Method + " is not allowed on " + quote.Clip(r.URL.Path)}
}

// ValidRouteName reports whether name can be a Kafka cluster or topic name
// in the URL /kafka/{cluster}/topics/{topic} (page and API); the
// configuration checks cluster names with it at start.
func ValidRouteName(name string) bool { return nameRE.MatchString(name) }

// RouteNamePattern is the rule ValidRouteName applies, for messages.
func RouteNamePattern() string { return nameRE.String() }

// keyGroupResult is one key's answer. Subtask fields are present only when
// the parallelism they refer to was given.
type keyGroupResult struct {
	Key                     any    `json:"key"`
	Type                    string `json:"type"`
	JavaHash                int32  `json:"javaHash"`
	MaxParallelism          int    `json:"maxParallelism"`
	MaxParallelismDefaulted bool   `json:"maxParallelismDefaulted"`
	KeyGroup                int    `json:"keyGroup"`
	Parallelism             int    `json:"parallelism,omitempty"`
	Subtask                 *int   `json:"subtask,omitempty"`
	TargetParallelism       int    `json:"targetParallelism,omitempty"`
	TargetSubtask           *int   `json:"targetSubtask,omitempty"`
	// KeyRow is, for a Flink SQL key (type sql), the key row's bytes in
	// hex, the BinaryRowData whose hashCode is JavaHash.
	KeyRow string `json:"keyRow,omitempty"`
}

// keyGroupParams are the shared inputs of the single and bulk lookups.
type keyGroupParams struct {
	typ assign.KeyType
	// sql is set for type sql: the key is a Flink SQL key row of these
	// columns, hashed by BinaryRowData.hashCode.
	sql       *sqlKeyColumns
	maxP      int
	defaulted bool
	p         int // 0: not given
	target    int // 0: not given
}

func (kp keyGroupParams) lookup(key any, text string) (keyGroupResult, error) {
	if kp.sql != nil {
		enc, _ := assign.NewKeyRowEncoder(kp.sql.types...) // parseAPIColumns checked the types
		return kp.sqlResult(enc, key, text)
	}
	h, err := assign.HashKey(kp.typ, text)
	if err != nil {
		return keyGroupResult{}, err
	}
	return kp.result(key, h), nil
}

// sqlResult writes the key row of text (as SetKeyText reads it) with enc
// and places it.
func (kp keyGroupParams) sqlResult(enc *assign.KeyRowEncoder, key any, text string) (keyGroupResult, error) {
	if err := enc.SetKeyText(text); err != nil {
		return keyGroupResult{}, err
	}
	row, err := enc.Bytes()
	if err != nil {
		return keyGroupResult{}, err
	}
	h, _ := enc.HashCode() // the row is complete: Bytes succeeded
	r := kp.result(key, h)
	r.KeyRow = hex.EncodeToString(row)
	return r, nil
}

// typeName is the type a result names: for a SQL key, sql: and its columns.
func (kp keyGroupParams) typeName() string {
	if kp.sql != nil {
		return "sql:" + kp.sql.String()
	}
	return kp.typ.String()
}

// parseAPIKeyType reads type and, for type sql, columns (each with its SQL
// type) into kp.
func (kp *keyGroupParams) parseAPIKeyType(typeName, columns string) error {
	if strings.EqualFold(strings.TrimSpace(typeName), "sql") {
		if strings.TrimSpace(columns) == "" {
			return badInput("columns", "required for type sql: the key's columns in key order with their SQL types, such as user_id STRING, region_id BIGINT")
		}
		c, err := parseSQLKeyColumns(columns)
		if err != nil {
			return badInput("columns", "%v", err)
		}
		if len(c.untyped) > 0 {
			return badInput("columns", "give the SQL type of %s, such as %s STRING", c.names[c.untyped[0]], c.names[c.untyped[0]])
		}
		kp.sql = &c
		return nil
	}
	if columns != "" {
		return badInput("columns", "key columns are for a Flink SQL key (type sql); a %s key has none", typeName)
	}
	var err error
	kp.typ, err = parseKeyType("type", typeName)
	return err
}

// result places a key of hash h.
func (kp keyGroupParams) result(key any, h int32) keyGroupResult {
	kg := assign.KeyGroupForHash(h, kp.maxP)
	r := keyGroupResult{
		Key: key, Type: kp.typeName(), JavaHash: h,
		MaxParallelism: kp.maxP, MaxParallelismDefaulted: kp.defaulted, KeyGroup: kg,
	}
	if kp.p > 0 {
		s := assign.OperatorIndex(kp.maxP, kp.p, kg)
		r.Parallelism, r.Subtask = kp.p, &s
	}
	if kp.target > 0 {
		s := assign.OperatorIndex(kp.maxP, kp.target, kg)
		r.TargetParallelism, r.TargetSubtask = kp.target, &s
	}
	return r
}

// checkTarget validates a target parallelism against maxP: a rescale keeps
// the max parallelism of the savepoint.
func checkTarget(field string, target, maxP int) error {
	if target > maxP {
		return badInput(field, "%d is above maxParallelism %d; a job restored from a savepoint keeps its max parallelism, so it cannot run keyed operators above it", target, maxP)
	}
	return nil
}

func parseKeyType(field, s string) (assign.KeyType, error) {
	if s == "" {
		return assign.KeyType{Kind: assign.KindString}, nil
	}
	t, err := assign.ParseKeyType(s)
	if err != nil {
		return t, badInput(field, "%v", err)
	}
	return t, nil
}

// serveKeyGroup answers GET /api/v1/keygroup.
func (s *Server) serveKeyGroup(w http.ResponseWriter, r *http.Request) error {
	q := query{r.URL.Query()}
	if _, err := q.single("key"); err != nil {
		return err
	}
	if _, ok := q.Values["key"]; !ok {
		return badInput("key", "required (the empty string is a valid key: give key=)")
	}
	key := q.Get("key") // keep the key's own whitespace
	typeName, err := q.single("type")
	if err != nil {
		return err
	}
	columns, err := q.single("columns")
	if err != nil {
		return err
	}
	kp := keyGroupParams{}
	if err := kp.parseAPIKeyType(typeName, columns); err != nil {
		return err
	}
	if kp.p, err = q.parallelism("parallelism", false); err != nil {
		return err
	}
	if kp.maxP, kp.defaulted, err = q.maxParallelism("maxParallelism", kp.p, "parallelism"); err != nil {
		return err
	}
	if kp.target, err = q.parallelism("targetParallelism", false); err != nil {
		return err
	}
	if err := checkTarget("targetParallelism", kp.target, kp.maxP); err != nil {
		return err
	}
	res, err := kp.lookup(key, key)
	if err != nil {
		return badInput("key", "%v", err)
	}
	return writeJSON(w, http.StatusOK, res)
}

// bulkRequest is the body of POST /api/v1/keygroup.
type bulkRequest struct {
	Type              string            `json:"type"`
	Columns           string            `json:"columns"`
	MaxParallelism    int               `json:"maxParallelism"`
	Parallelism       int               `json:"parallelism"`
	TargetParallelism int               `json:"targetParallelism"`
	Keys              []json.RawMessage `json:"keys"`
}

// serveKeyGroupBulk answers POST /api/v1/keygroup.
func (s *Server) serveKeyGroupBulk(w http.ResponseWriter, r *http.Request) error {
	if ct := r.Header.Get("Content-Type"); ct != "" && !strings.HasPrefix(ct, "application/json") {
		return &inputError{Status: http.StatusUnsupportedMediaType, Msg: fmt.Sprintf("Content-Type %s: send application/json", quote.Clip(ct))}
	}
	body := http.MaxBytesReader(w, r.Body, MaxBulkBody)
	dec := json.NewDecoder(body)
	dec.DisallowUnknownFields()
	var req bulkRequest
	if err := dec.Decode(&req); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return &inputError{Status: http.StatusRequestEntityTooLarge, Msg: fmt.Sprintf("request body over %d bytes; send at most %d keys per request", MaxBulkBody, MaxBulkKeys)}
		}
		return badInput("body", "not a JSON object of the form {\"type\",\"maxParallelism\",\"parallelism\",\"keys\":[...]}: %v", err)
	}
	if dec.More() {
		return badInput("body", "trailing data after the JSON object")
	}
	if len(req.Keys) == 0 {
		return badInput("keys", "required: a non-empty array of keys")
	}
	if len(req.Keys) > MaxBulkKeys {
		return &inputError{Status: http.StatusRequestEntityTooLarge, Field: "keys", Msg: fmt.Sprintf("%d keys; at most %d per request", len(req.Keys), MaxBulkKeys)}
	}
	kp := keyGroupParams{}
	var err error
	if err := kp.parseAPIKeyType(req.Type, req.Columns); err != nil {
		return err
	}
	if req.Parallelism != 0 {
		if err := assign.CheckParallelism(req.Parallelism); err != nil {
			return badInput("parallelism", "%d is not in 1..%d", req.Parallelism, assign.UpperBoundMaxParallelism)
		}
		kp.p = req.Parallelism
	}
	if kp.maxP, kp.defaulted, err = resolveMaxP("maxParallelism", req.MaxParallelism, kp.p, "parallelism"); err != nil {
		return err
	}
	if req.TargetParallelism != 0 {
		if err := assign.CheckParallelism(req.TargetParallelism); err != nil {
			return badInput("targetParallelism", "%d is not in 1..%d", req.TargetParallelism, assign.UpperBoundMaxParallelism)
		}
		if err := checkTarget("targetParallelism", req.TargetParallelism, kp.maxP); err != nil {
			return err
		}
		kp.target = req.TargetParallelism
	}
	results := make([]keyGroupResult, len(req.Keys))
	if kp.sql != nil {
		enc, _ := assign.NewKeyRowEncoder(kp.sql.types...) // parseAPIKeyType checked the types
		for i, raw := range req.Keys {
			if results[i], err = kp.sqlResult(enc, raw, sqlKeyText(raw)); err != nil {
				return badInput("keys["+strconv.Itoa(i)+"]", "%v", err)
			}
		}
		return writeJSON(w, http.StatusOK, struct {
			Results []keyGroupResult `json:"results"`
		}{results})
	}
	for i, raw := range req.Keys {
		field := "keys[" + strconv.Itoa(i) + "]"
		key, h, err := bulkKeyHash(kp.typ, raw)
		if err != nil {
			return badInput(field, "%v", err)
		}
		results[i] = kp.result(key, h)
	}
	return writeJSON(w, http.StatusOK, struct {
		Results []keyGroupResult `json:"results"`
	}{results})
}

// sqlKeyText is a JSON key of a Flink SQL key as SetKeyText reads it: an
// array as it is, one value (a string, a number, a boolean or null) as an
// array of it, so that a string keeps its escapes and null is a null.
func sqlKeyText(raw json.RawMessage) string {
	t := strings.TrimSpace(string(raw))
	if strings.HasPrefix(t, "[") {
		return t
	}
	return "[" + t + "]"
}

// bulkKeyHash hashes one JSON key and returns the value echoed back.
// Strings are decoded as Jackson decodes them in a Flink job, to UTF-16 code
// units, so an escaped lone surrogate ("\ud800") keeps its code unit where
// encoding/json would give U+FFFD; such a key is echoed as it was sent. For
// numeric and boolean types a JSON number or boolean is accepted too; a
// tuple is a JSON array.
func bulkKeyHash(t assign.KeyType, raw json.RawMessage) (any, int32, error) {
	trimmed := strings.TrimSpace(string(raw))
	if trimmed == "null" {
		return nil, 0, assign.ErrNullKey
	}
	if t.Kind == assign.KindTuple {
		if !strings.HasPrefix(trimmed, "[") {
			return nil, 0, fmt.Errorf("a %s key is a JSON array with %d fields", t, len(t.Fields))
		}
		h, err := assign.HashKey(t, trimmed)
		return json.RawMessage(trimmed), h, err
	}
	if strings.HasPrefix(trimmed, `"`) {
		s, err := assign.UnquoteJSONString(trimmed)
		if err != nil {
			return nil, 0, err
		}
		h, err := assign.HashKeyJava(t, s)
		if s.HasLoneSurrogate() {
			return json.RawMessage(trimmed), h, err
		}
		return s.String(), h, err
	}
	switch t.Kind {
	case assign.KindString, assign.KindChar:
		return nil, 0, fmt.Errorf("a %s key is a JSON string, got %s", t, quote.Clip(trimmed))
	}
	if strings.HasPrefix(trimmed, "[") || strings.HasPrefix(trimmed, "{") {
		return nil, 0, fmt.Errorf("a %s key is a JSON number or string, got %s", t, quote.Clip(trimmed))
	}
	h, err := assign.HashKey(t, trimmed)
	return json.RawMessage(trimmed), h, err
}

// rangesResponse is the body of GET /api/v1/keygroups/ranges.
type rangesResponse struct {
	MaxParallelism          int          `json:"maxParallelism"`
	MaxParallelismDefaulted bool         `json:"maxParallelismDefaulted"`
	Parallelism             int          `json:"parallelism"`
	Ranges                  []rangeEntry `json:"ranges"`
	Skew                    assign.Skew  `json:"skew"`
	Source                  string       `json:"source"`
}

type rangeEntry struct {
	Subtask int `json:"subtask"`
	Start   int `json:"start"`
	End     int `json:"end"`
	Size    int `json:"size"`
}

// serveRanges answers GET /api/v1/keygroups/ranges.
func (s *Server) serveRanges(w http.ResponseWriter, r *http.Request) error {
	q := query{r.URL.Query()}
	p, err := q.parallelism("parallelism", true)
	if err != nil {
		return err
	}
	maxP, defaulted, err := q.maxParallelism("maxParallelism", p, "parallelism")
	if err != nil {
		return err
	}
	rs, err := assign.KeyGroupRanges(maxP, p)
	if err != nil {
		return badInput("parallelism", "%v", err)
	}
	resp := rangesResponse{
		MaxParallelism: maxP, MaxParallelismDefaulted: defaulted, Parallelism: p,
		Ranges: make([]rangeEntry, len(rs)),
		Source: "computed: KeyGroupRangeAssignment.computeKeyGroupRangeForOperatorIndex",
	}
	sizes := make([]float64, len(rs))
	for i, kr := range rs {
		resp.Ranges[i] = rangeEntry{Subtask: i, Start: kr.Start, End: kr.End, Size: kr.Size()}
		sizes[i] = float64(kr.Size())
	}
	resp.Skew = assign.MeasureSkew(sizes)
	return writeJSON(w, http.StatusOK, resp)
}

// parseTopics reads repeated topic=NAME:PARTITIONS parameters. The name is
// everything before the last colon, so names may contain colons.
func parseTopics(q query) ([]assign.Topic, error) {
	vals := q.Values["topic"]
	if len(vals) == 0 {
		return nil, badInput("topic", "required: one or more topic=NAME:PARTITIONS, e.g. topic=orders:12")
	}
	if len(vals) > MaxTopicsPerQuery {
		return nil, badInput("topic", "%d topics; at most %d", len(vals), MaxTopicsPerQuery)
	}
	topics := make([]assign.Topic, 0, len(vals))
	seen := make(map[string]bool, len(vals))
	total := 0
	for _, v := range vals {
		i := strings.LastIndexByte(v, ':')
		if i <= 0 {
			return nil, badInput("topic", "%s: want NAME:PARTITIONS, e.g. orders:12", quote.Clip(v))
		}
		name, count := strings.TrimSpace(v[:i]), v[i+1:]
		if name == "" {
			return nil, badInput("topic", "%s: the topic name is blank; want NAME:PARTITIONS, e.g. orders:12", quote.Clip(v))
		}
		n, err := strconv.Atoi(strings.TrimSpace(count))
		if err != nil || n < 1 || n > assign.MaxPartitions {
			return nil, badInput("topic", "%s: partition count %s is not an integer in 1..%d", quote.Clip(name), quote.Clip(count), assign.MaxPartitions)
		}
		if seen[name] {
			return nil, badInput("topic", "%s is given twice", quote.Clip(name))
		}
		seen[name] = true
		total += n
		if total > MaxPartitionsPerQuery {
			return nil, badInput("topic", "more than %d partitions in all", MaxPartitionsPerQuery)
		}
		topics = append(topics, assign.Topic{Name: name, Partitions: n})
	}
	return topics, nil
}

type assignmentPartition struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Subtask   int    `json:"subtask"`
}

type assignmentSubtask struct {
	Subtask    int                     `json:"subtask"`
	Count      int                     `json:"count"`
	Partitions []assign.TopicPartition `json:"partitions"`
}

// assignmentResponse is the body of GET /api/v1/assignment.
type assignmentResponse struct {
	Parallelism     int    `json:"parallelism"`
	Strategy        string `json:"strategy"`
	StrategyLabel   string `json:"strategyLabel"`
	Exact           bool   `json:"exact"`
	Comparison      bool   `json:"comparison"`
	Mode            string `json:"mode"`
	FromParallelism int    `json:"fromParallelism,omitempty"`
	// History is the parallelisms from the fresh start to this one, for a
	// restore.
	History []int `json:"history,omitempty"`
	// Uncertain lists partitions whose owner after a restore Flink does not
	// fix deterministically (placed at the model's best guess).
	Uncertain  []assign.TopicPartition `json:"uncertain,omitempty"`
	Source     string                  `json:"source"`
	Notes      []string                `json:"notes,omitempty"`
	Partitions []assignmentPartition   `json:"partitions"`
	Subtasks   []assignmentSubtask     `json:"subtasks"`
	Skew       assign.Skew             `json:"skew"`
}

// parseHistory reads from=P_OLD, or from=P0,P1,... for a job started fresh
// at P0 and restored at each later entry before this one.
func parseHistory(q query) ([]int, error) {
	s, err := q.single("from")
	if err != nil {
		return nil, err
	}
	if s == "" {
		return nil, badInput("from", "required with mode=restore: the parallelism the savepoint was taken at, or a comma-separated history P0,P1,... starting with the fresh start")
	}
	parts := strings.Split(s, ",")
	if len(parts) > 64 {
		return nil, badInput("from", "a history of %d parallelisms; at most 64", len(parts))
	}
	h := make([]int, len(parts))
	for i, part := range parts {
		n, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil || n < 1 || n > assign.UpperBoundMaxParallelism {
			return nil, badInput("from", "%s is not a parallelism in 1..%d", quote.Clip(part), assign.UpperBoundMaxParallelism)
		}
		h[i] = n
	}
	return h, nil
}

// serveAssignment answers GET /api/v1/assignment.
func (s *Server) serveAssignment(w http.ResponseWriter, r *http.Request) error {
	q := query{r.URL.Query()}
	topics, err := parseTopics(q)
	if err != nil {
		return err
	}
	p, err := q.parallelism("parallelism", true)
	if err != nil {
		return err
	}
	stratName, err := q.single("strategy")
	if err != nil {
		return err
	}
	if stratName == "" {
		stratName = "flink"
	}
	st, err := strategy.Lookup(stratName)
	if err != nil {
		return badInput("strategy", "%v", err)
	}
	mode, err := q.single("mode")
	if err != nil {
		return err
	}
	resp := assignmentResponse{
		Parallelism: p, Strategy: st.Name, StrategyLabel: st.Label,
		Exact: st.Exact, Comparison: st.Comparison, Source: st.Source,
	}
	var a assign.Assignment
	switch mode {
	case "", "fresh":
		resp.Mode = "fresh"
		// Restore-only inputs in a fresh query most likely mean a
		// forgotten mode=restore: say so rather than answer another
		// question than the one asked.
		for _, name := range []string{"from", "startingOffsets", "connector"} {
			if q.has(name) {
				return badInput(name, "only used with mode=restore")
			}
		}
		if a, err = st.Assign(topics, p); err != nil {
			return badInput("parallelism", "%v", err)
		}
	case "restore":
		resp.Mode = "restore"
		if st.Name != "flink" {
			return badInput("mode", "restore is modelled for strategy=flink only (Flink's KafkaSource); %s has no savepoint", st.Name)
		}
		history, err := parseHistory(q)
		if err != nil {
			return err
		}
		offsets, err := q.single("startingOffsets")
		if err != nil {
			return err
		}
		switch offsets {
		case "", assign.StartingOffsetsEarliest, assign.StartingOffsetsCommitted, assign.StartingOffsetsLatest, assign.StartingOffsetsTimestamp, assign.StartingOffsetsSpecific:
		default:
			return badInput("startingOffsets", "%s: want earliest, committed, latest, timestamp or specific", quote.Clip(offsets))
		}
		connector, err := q.single("connector")
		if err != nil {
			return err
		}
		switch connector {
		case "", assign.ConnectorLine5, assign.ConnectorLine34:
		default:
			return badInput("connector", "%s: want 5 (flink-connector-kafka 5.0.x) or 3-4 (3.x and 4.0.x)", quote.Clip(connector))
		}
		rr, err := assign.Restore(assign.RestoreInput{
			Topics: topics, History: append(history, p), StartingOffsets: offsets, ConnectorLine: connector,
		})
		if err != nil {
			return badInput("from", "%v", err)
		}
		a = rr.Assignment
		resp.FromParallelism = history[len(history)-1]
		resp.History = rr.History
		resp.Exact = rr.Exact
		resp.Uncertain = rr.Uncertain
		resp.Source = rr.Source
		resp.Notes = rr.Notes
	default:
		return badInput("mode", "%s: want fresh or restore", quote.Clip(mode))
	}
	resp.Partitions = make([]assignmentPartition, 0, len(a.Owners))
	for tp, o := range a.All() {
		resp.Partitions = append(resp.Partitions, assignmentPartition{Topic: tp.Topic, Partition: tp.Partition, Subtask: o})
	}
	resp.Subtasks = make([]assignmentSubtask, p)
	for i, ps := range a.Subtasks {
		if ps == nil {
			ps = []assign.TopicPartition{}
		}
		resp.Subtasks[i] = assignmentSubtask{Subtask: i, Count: len(ps), Partitions: ps}
	}
	resp.Skew = assign.MeasureSkew(a.Counts())
	return writeJSON(w, http.StatusOK, resp)
}
