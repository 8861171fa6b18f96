package overrides

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
)

// patchYAMLDocument applies ops to a YAML document through its node tree,
// so key order and comments survive; Karmada's round trip through JSON sorts
// keys and drops comments, but yields the same data.
func patchYAMLDocument(doc string, ops []policyv1alpha1.YAMLPatchOperation) (string, error) {
	dec := yaml.NewDecoder(strings.NewReader(doc))
	var root yaml.Node
	if err := dec.Decode(&root); err != nil {
		if errors.Is(err, io.EOF) {
			return "", fmt.Errorf("field holds an empty YAML document")
		}
		return "", fmt.Errorf("field is not YAML: %w", err)
	}
	var next yaml.Node
	if err := dec.Decode(&next); !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("field holds more than one YAML document")
	}
	if len(root.Content) != 1 {
		return "", fmt.Errorf("field holds an empty YAML document")
	}
	body := root.Content[0]
	if body.Kind != yaml.MappingNode && body.Kind != yaml.SequenceNode {
		return "", fmt.Errorf("field holds a YAML scalar, not a mapping or sequence")
	}
	for i, o := range ops {
		p, err := parsePointer(o.SubPath)
		if err != nil {
			return "", fmt.Errorf("yaml[%d]: %w", i, err)
		}
		var val *yaml.Node
		if o.Operator != policyv1alpha1.OverriderOpRemove {
			if val, err = yamlValue(o.Value.Raw); err != nil {
				return "", fmt.Errorf("yaml[%d] %s: %w", i, o.SubPath, err)
			}
		}
		if body, err = yamlPatch(body, p, 0, o.Operator, val); err != nil {
			return "", fmt.Errorf("yaml[%d] %s %s: %w", i, o.Operator, o.SubPath, err)
		}
	}
	root.Content[0] = body

	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(yamlIndent(doc))
	if err := enc.Encode(&root); err != nil {
		return "", fmt.Errorf("encode YAML: %w", err)
	}
	if err := enc.Close(); err != nil {
		return "", fmt.Errorf("encode YAML: %w", err)
	}
	out := buf.String()
	if !strings.HasSuffix(doc, "\n") {
		out = strings.TrimSuffix(out, "\n")
	}
	return out, nil
}

// yamlValue turns a JSON value into block-style YAML nodes. JSON is YAML,
// so the YAML parser reads it; only the flow and quoting styles are reset.
func yamlValue(raw []byte) (*yaml.Node, error) {
	if len(raw) == 0 {
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}, nil
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("value is not JSON: %w", err)
	}
	if len(doc.Content) != 1 {
		return nil, fmt.Errorf("value is empty")
	}
	n := doc.Content[0]
	blockStyle(n)
	return n, nil
}

// blockStyle clears the styles JSON syntax implies. The encoder still quotes
// a string that YAML 1.2 would read as another type, because its tag says
// !!str; strings that only YAML 1.1 reads as booleans are quoted here.
func blockStyle(n *yaml.Node) {
	n.Style = 0
	if n.Kind == yaml.ScalarNode && n.Tag == "!!str" {
		n.Style = quoteYAML11(n.Value)
	}
	for _, c := range n.Content {
		blockStyle(c)
	}
}

// quoteYAML11 double-quotes the strings a YAML 1.1 reader (goyaml.v2, so
// sigs.k8s.io/yaml and many applications) would take for booleans.
func quoteYAML11(s string) yaml.Style {
	switch strings.ToLower(s) {
	case "y", "yes", "n", "no", "on", "off":
		return yaml.DoubleQuotedStyle
	}
	return 0
}

func yamlPatch(node *yaml.Node, p pointer, i int, op policyv1alpha1.OverriderOperator, val *yaml.Node) (*yaml.Node, error) {
	if len(p) == 0 {
		if op == policyv1alpha1.OverriderOpRemove {
			return nil, fmt.Errorf("cannot remove the whole document")
		}
		return val, nil
	}
	if node.Kind == yaml.AliasNode && node.Alias != nil {
		node = node.Alias
	}
	tok := p[i]
	last := i == len(p)-1
	switch node.Kind {
	case yaml.MappingNode:
		k := mappingKey(node, tok)
		if last {
			switch {
			case op == policyv1alpha1.OverriderOpAdd && k < 0:
				key := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: tok, Style: quoteYAML11(tok)}
				node.Content = append(node.Content, key, val)
			case k < 0:
				return nil, fmt.Errorf("no key %q at %s", tok, p.prefix(i))
			case op == policyv1alpha1.OverriderOpRemove:
				node.Content = append(node.Content[:k:k], node.Content[k+2:]...)
			default:
				keepComments(node.Content[k+1], val)
				node.Content[k+1] = val
			}
			return node, nil
		}
		if k < 0 {
			return nil, fmt.Errorf("no key %q at %s", tok, p.prefix(i))
		}
		child, err := yamlPatch(node.Content[k+1], p, i+1, op, val)
		if err != nil {
			return nil, err
		}
		node.Content[k+1] = child
		return node, nil
	case yaml.SequenceNode:
		if !last {
			idx, err := arrayIndex(tok, len(node.Content), false)
			if err != nil {
				return nil, fmt.Errorf("at %s: %w", p.prefix(i), err)
			}
			child, err := yamlPatch(node.Content[idx], p, i+1, op, val)
			if err != nil {
				return nil, err
			}
			node.Content[idx] = child
			return node, nil
		}
		if op == policyv1alpha1.OverriderOpAdd && tok == "-" {
			node.Content = append(node.Content, val)
			return node, nil
		}
		idx, err := arrayIndex(tok, len(node.Content), op == policyv1alpha1.OverriderOpAdd)
		if err != nil {
			return nil, fmt.Errorf("at %s: %w", p.prefix(i), err)
		}
		switch op {
		case policyv1alpha1.OverriderOpAdd:
			node.Content = append(node.Content[:idx:idx], append([]*yaml.Node{val}, node.Content[idx:]...)...)
		case policyv1alpha1.OverriderOpRemove:
			node.Content = append(node.Content[:idx:idx], node.Content[idx+1:]...)
		default:
			keepComments(node.Content[idx], val)
			node.Content[idx] = val
		}
		return node, nil
	default:
		return nil, fmt.Errorf("%s is a YAML scalar, not a mapping or sequence", p.prefix(i))
	}
}

// mappingKey is the index in n.Content of the key named tok, or -1.
func mappingKey(n *yaml.Node, tok string) int {
	for k := 0; k+1 < len(n.Content); k += 2 {
		if n.Content[k].Kind == yaml.ScalarNode && n.Content[k].Value == tok {
			return k
		}
	}
	return -1
}

// keepComments moves the comments of a replaced node to its replacement.
func keepComments(old, repl *yaml.Node) {
	repl.HeadComment, repl.LineComment, repl.FootComment = old.HeadComment, old.LineComment, old.FootComment
}

// yamlIndent guesses the document's indentation step: the smallest non-zero
// indentation of any line, 2 when nothing is indented. The encoder cannot
// indent by less than 2.
func yamlIndent(doc string) int {
	best := 0
	for _, line := range strings.Split(doc, "\n") {
		n := len(line) - len(strings.TrimLeft(line, " "))
		if n > 0 && n < len(line) && (best == 0 || n < best) {
			best = n
		}
	}
	if best < 2 {
		return 2
	}
	return best
}
