package collectors

import (
	"errors"
	"fmt"
	"testing"
)

func TestFieldErrors(t *testing.T) {
	var none FieldErrors
	if err := none.Err(); err != nil {
		t.Errorf("FieldErrors{}.Err() = %#v, want nil", err)
	}
	var es FieldErrors
	es.Add("sasl.mechanism", "unsupported %q", "GSSAPI")
	es.Add("", "tls.certFilepath, tls.keyFilepath: set both or neither")
	const want = "sasl.mechanism: unsupported \"GSSAPI\"\ntls.certFilepath, tls.keyFilepath: set both or neither"
	if got := es.Err().Error(); got != want {
		t.Errorf("Err().Error() = %q, want %q", got, want)
	}
	var got FieldErrors
	if !errors.As(fmt.Errorf("kafka cluster %q: %w", "prod", es.Err()), &got) || len(got) != 2 || got[0] != (FieldError{"sasl.mechanism", `unsupported "GSSAPI"`}) {
		t.Errorf("errors.As(wrapped, *FieldErrors) = %v, want the two problems", got)
	}
}
