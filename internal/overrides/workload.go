package overrides

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// podSpecPath is where a workload kind keeps its pod spec. Image, command and
// args overriders without a predicate change only these kinds. Like Karmada,
// only the kind is compared, so look-alike CRDs (an OpenKruise StatefulSet)
// are covered too.
func podSpecPath(kind string) string {
	switch kind {
	case "Pod":
		return "/spec"
	case "ReplicaSet", "Deployment", "DaemonSet", "StatefulSet", "Job":
		return "/spec/template/spec"
	case "CronJob":
		return "/spec/jobTemplate/spec/template/spec"
	}
	return ""
}

// walkMap follows a plain (unescaped) slash path of object keys. A missing
// or null step is reported as not found; a step that is not an object is an
// error, since the template is then malformed for its kind.
func walkMap(obj map[string]any, path string) (map[string]any, bool, error) {
	cur := obj
	for rest := strings.TrimPrefix(path, "/"); rest != ""; {
		key, after, _ := strings.Cut(rest, "/")
		v, ok := cur[key]
		if !ok || v == nil {
			return nil, false, nil
		}
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false, &pathError{path: path, err: fmt.Errorf("%q is %s, not an object", key, typeName(v))}
		}
		cur, rest = m, after
	}
	return cur, true, nil
}

// containerList returns the containers (or initContainers) of a pod spec.
func containerList(spec map[string]any, specPath, field string) ([]any, error) {
	v, ok := spec[field]
	if !ok || v == nil {
		return nil, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, &pathError{path: specPath + "/" + field, err: fmt.Errorf("is %s, not an array", typeName(v))}
	}
	return list, nil
}

func containerPath(specPath, field string, i int) string {
	return specPath + "/" + field + "/" + strconv.Itoa(i)
}

// pathError carries the JSON pointer an overrider failed at up to the rule,
// which turns it into Error.Path.
type pathError struct {
	path string
	err  error
}

func (e *pathError) Error() string { return e.path + ": " + e.err.Error() }

func (e *pathError) Unwrap() error { return e.err }

// splitPathError separates the path from a pathError, if err is one.
func splitPathError(err error) (string, error) {
	var pe *pathError
	if errors.As(err, &pe) {
		return pe.path, pe.err
	}
	return "", err
}
