package views

import "strings"

// KeysPage is the key lookup (/keys).
type KeysPage struct {
	Layout
	Form   KeysForm
	Single *KeyResult
	Bulk   *BulkKeys
}

// KeysForm echoes the key lookup input.
type KeysForm struct {
	Action, CSVAction string
	Keys, Type        string
	// Columns are a SQL key's columns (type sql); SQL is set for type sql.
	Columns string
	// Table is the SQL key's table as typed (its CREATE TABLE statement or
	// column list), which types the columns named alone.
	Table                               string
	SQL                                 bool
	Parallelism, Target, MaxParallelism string
	MaxPHint                            string
	Types                               []string
	Errors                              map[string]string
}

// Err returns the message for field, or "".
func (f KeysForm) Err(field string) string { return f.Errors[field] }

// KeyResult explains one key step by step.
type KeyResult struct {
	Key, Type string
	JavaHash  string
	// HashLabel names the hash: Java hashCode, or BinaryRowData.hashCode
	// for a SQL key, whose row bytes Row shows, 8 a line.
	HashLabel      string
	Row            []string
	KeyGroup       string
	MaxParallelism string
	MaxPNote       string
	Parallelism    string
	Subtask        string
	Range          string
	Target         string
	TargetSubtask  string
	TargetRange    string
	Moves          bool
	Steps          []string
}

// BulkKeys is the result of a pasted or uploaded list.
type BulkKeys struct {
	Count          int
	Skipped        string
	MaxParallelism string
	HasTarget      bool
	// HashLabel heads the hash column; Columns are a SQL key's columns.
	HashLabel, Columns string
	Rows               []KeyRow
	More               string
	Histogram          []HistRow
	Skew, TSkew        string
	CSVURL             string
}

// KeyRow is one key in the bulk table.
type KeyRow struct {
	Key, JavaHash, KeyGroup, Subtask, TargetSubtask string
	Moves                                           bool
}

// HistRow is one subtask's share of the keys, now and at the target.
type HistRow struct {
	Subtask           int
	Now, Then         int
	NowText, ThenText string
	Max               int
	HasNow, HasThen   bool
}

// dotHead and dotTail split a name after its first dot
// ("BinaryRowData." and "hashCode"), where a narrow figure may break it;
// a name without a dot is all head.
func dotHead(s string) string {
	if i := strings.IndexByte(s, '.'); i >= 0 {
		return s[:i+1]
	}
	return s
}

func dotTail(s string) string { return strings.TrimPrefix(s, dotHead(s)) }
