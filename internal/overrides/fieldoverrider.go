package overrides

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	jsonpatch "github.com/evanphx/json-patch/v5"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
)

// applyFieldOverrider patches the JSON or YAML document held in the string
// at o.FieldPath (say a ConfigMap's /data/config.yaml) and writes it back in
// the same format. yaml wins when both are set, as in Karmada; the CRD
// rejects that anyway.
func applyFieldOverrider(obj map[string]any, o *policyv1alpha1.FieldOverrider) error {
	if len(o.YAML) == 0 && len(o.JSON) == 0 {
		return nil
	}
	p, err := parsePointer(o.FieldPath)
	if err != nil {
		return &pathError{path: o.FieldPath, err: err}
	}
	cur, err := p.get(obj)
	if err != nil {
		return &pathError{path: o.FieldPath, err: err}
	}
	doc, ok := cur.(string)
	if !ok {
		return &pathError{path: o.FieldPath, err: fmt.Errorf("holds %s, not a string", typeName(cur))}
	}
	var out string
	if len(o.YAML) > 0 {
		out, err = patchYAMLDocument(doc, o.YAML)
	} else {
		out, err = patchJSONDocument(doc, o.JSON)
	}
	if err != nil {
		return &pathError{path: o.FieldPath, err: err}
	}
	if err := p.patch(obj, policyv1alpha1.OverriderOpReplace, out); err != nil {
		return &pathError{path: o.FieldPath, err: err}
	}
	return nil
}

// jsonPatchOp is one RFC 6902 operation as evanphx/json-patch decodes it.
type jsonPatchOp struct {
	Op    string          `json:"op"`
	Path  string          `json:"path"`
	Value json.RawMessage `json:"value,omitempty"`
}

// patchJSONDocument applies ops with evanphx/json-patch, which keeps the
// document's key order. A multi-line document is re-indented with the
// indentation its second line used, so pretty JSON stays pretty.
func patchJSONDocument(doc string, ops []policyv1alpha1.JSONPatchOperation) (string, error) {
	patch := make([]jsonPatchOp, len(ops))
	for i, o := range ops {
		patch[i] = jsonPatchOp{Op: string(o.Operator), Path: o.SubPath}
		if o.Operator != policyv1alpha1.OverriderOpRemove {
			patch[i].Value = valueOrNull(o.Value.Raw)
		}
		if _, err := parsePointer(o.SubPath); err != nil {
			return "", fmt.Errorf("json[%d]: %w", i, err)
		}
	}
	// Without SetEscapeHTML(false), encoding/json would turn "<" in the
	// values into \u003c.
	var raw bytes.Buffer
	enc := json.NewEncoder(&raw)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(patch); err != nil {
		return "", err
	}
	decoded, err := jsonpatch.DecodePatch(raw.Bytes())
	if err != nil {
		return "", fmt.Errorf("json: %w", err)
	}
	trimmed := strings.TrimSpace(doc)
	if !strings.HasPrefix(trimmed, "{") && !strings.HasPrefix(trimmed, "[") {
		return "", fmt.Errorf("field does not hold a JSON object or array")
	}
	opts := jsonpatch.NewApplyOptions()
	opts.EscapeHTML = false
	out, err := decoded.ApplyIndentWithOptions([]byte(trimmed), jsonIndent(trimmed), opts)
	if err != nil {
		return "", fmt.Errorf("json: %w", err)
	}
	if strings.HasSuffix(doc, "\n") {
		out = append(out, '\n')
	}
	return string(out), nil
}

func valueOrNull(raw []byte) json.RawMessage {
	if len(raw) == 0 {
		return json.RawMessage("null")
	}
	return raw
}

// jsonIndent is the leading whitespace of the document's second line, or ""
// for a one-line document.
func jsonIndent(doc string) string {
	_, rest, ok := strings.Cut(doc, "\n")
	if !ok {
		return ""
	}
	line, _, _ := strings.Cut(rest, "\n")
	indent := line[:len(line)-len(strings.TrimLeft(line, " \t"))]
	if indent == "" {
		return "  "
	}
	return indent
}
