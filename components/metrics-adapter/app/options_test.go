package app

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

func TestOptionsNameTheBadFlag(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{args: []string{"--kube-api-qps=0"}, want: "--kube-api-qps"},
		{args: []string{"--kube-api-burst=-1"}, want: "--kube-api-burst"},
		{args: []string{"--cluster-api-qps=-2"}, want: "--cluster-api-qps"},
		{args: []string{"--cluster-api-burst=0"}, want: "--cluster-api-burst"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			o := NewOptions()
			fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
			o.AddFlags(fs)
			if err := fs.Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			err := o.Validate()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Validate after %v: %v, want an error naming %s", tt.args, err, tt.want)
			}
		})
	}
	if err := NewOptions().Validate(); err != nil {
		t.Errorf("the defaults are refused: %v", err)
	}
}
