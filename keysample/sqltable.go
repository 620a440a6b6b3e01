package keysample

import (
	"fmt"
	"slices"
	"strings"

	"github.com/skewscope/skewscope/sqlplan"
)

// SQLTableKey returns the options that read key of table t (its CREATE
// TABLE statement, parsed) from the topic's records as the table's Kafka
// connector does: from the record key when every key column is one of
// its key fields ('key.fields', or an upsert-kafka table's primary key)
// with 'key.format', else from the record value with 'value.format' (or
// 'format') over the value's columns ('value.fields-include'). The
// format's own options are passed on with their connector prefix
// ('key.', 'value.') removed. Mirrors KafkaConnectorOptionsUtil's
// createKeyFormatProjection and createValueFormatProjection. The error
// names the key column or option that does not fit.
func SQLTableKey(t sqlplan.Table, key []string) (SQLKeyOptions, error) {
	if len(key) == 0 {
		return SQLKeyOptions{}, fmt.Errorf("key columns: name at least one")
	}
	for _, k := range key {
		c, ok := t.Column(k)
		switch {
		case !ok:
			return SQLKeyOptions{}, fmt.Errorf("key column %s: not a column of table %s", k, t.Name)
		case c.Computed:
			return SQLKeyOptions{}, fmt.Errorf("key column %s: a computed column (AS %s); sample a column the records hold", k, c.Expr)
		case c.Metadata:
			return SQLKeyOptions{}, fmt.Errorf("key column %s: a metadata column, not read from the record's key or value", k)
		case c.TypeErr != nil:
			return SQLKeyOptions{}, fmt.Errorf("key column %s: %v", k, c.TypeErr)
		}
	}
	keyFields := t.KeyFields()
	inKey := 0
	for _, k := range key {
		if slices.Contains(keyFields, k) {
			inKey++
		}
	}
	o := SQLKeyOptions{Key: make([]string, len(key))}
	var part string
	switch {
	case inKey == len(key):
		o.From, o.Format, part = "key", t.KeyFormat(), "key."
		if o.Format == "" {
			return SQLKeyOptions{}, fmt.Errorf("table %s: key.fields names the key but no key.format is given", t.Name)
		}
		fields, err := t.KeyFormatFields()
		if err != nil {
			return SQLKeyOptions{}, err
		}
		prefix := t.KeyFieldsPrefix()
		for i, f := range keyFields {
			c, _ := t.Column(f)
			o.Columns = append(o.Columns, SQLColumn{Name: fields[i], Type: c.TypeText})
		}
		for i, k := range key {
			o.Key[i] = strings.TrimPrefix(k, prefix)
		}
	case inKey > 0:
		return SQLKeyOptions{}, fmt.Errorf("key columns %s: some are read from the record key (key.fields) and some from the value; sample one part at a time", strings.Join(key, ", "))
	default:
		o.From, o.Format, part = "value", t.ValueFormat(), "value."
		if o.Format == "" {
			return SQLKeyOptions{}, fmt.Errorf("table %s: no format or value.format option says how the record value is read", t.Name)
		}
		for _, f := range t.ValueFields() {
			c, _ := t.Column(f)
			o.Columns = append(o.Columns, SQLColumn{Name: f, Type: c.TypeText})
		}
		copy(o.Key, key)
	}
	// The format's options: 'value.json.x' or 'key.json.x', and for the
	// value also plain 'json.x' (a table with 'format' = 'json').
	fp := o.Format + "."
	for _, k := range t.OptionKeys {
		name, ok := strings.CutPrefix(k, part)
		if !ok && part == "value." {
			name, ok = k, true
		}
		if ok && strings.HasPrefix(name, fp) {
			if o.Options == nil {
				o.Options = map[string]string{}
			}
			o.Options[name] = t.Options[k]
		}
	}
	return o, nil
}
