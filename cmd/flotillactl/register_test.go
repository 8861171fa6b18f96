package main

import (
	"strings"
	"testing"
)

// TestRegisterRefusesBadInput: register, token and unregister say which
// argument is wrong before reaching any cluster.
func TestRegisterRefusesBadInput(t *testing.T) {
	tests := []struct {
		args    []string
		wantErr string
	}{
		{[]string{"register", "https://127.0.0.1:1", "--token", "not-a-token", "--cluster-name", "m1"}, "--token"},
		{[]string{"register", "https://127.0.0.1:1", "--token", "abcdef.0123456789abcdef", "--cluster-name", "m1", "--cert-expiration-seconds", "-1"},
			"--cert-expiration-seconds"},
		{[]string{"register", "--token", "abcdef.0123456789abcdef"}, "accepts 1 arg"},
		{[]string{"unregister"}, "accepts 1 arg"},
		{[]string{"token", "delete"}, "requires at least 1 arg"},
	}
	for _, tt := range tests {
		_, err := runCLI(t, tt.args...)
		if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("flotillactl %v: error %v, want one saying %q", tt.args, err, tt.wantErr)
		}
	}
}
