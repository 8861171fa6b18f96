// Command aggregated-apiserver serves cluster.karmada.io/v1alpha1 (Cluster,
// clusters/status and clusters/proxy) behind the control plane's API server,
// registered by an APIService, as karmada-aggregated-apiserver does.
package main

import (
	goflag "flag"
	"fmt"
	"os"

	"github.com/spf13/pflag"
	genericapiserver "k8s.io/apiserver/pkg/server"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/klog/v2"

	"github.com/flotilla-io/flotilla/components/aggregated-apiserver/app"
	"github.com/flotilla-io/flotilla/internal/release"
)

func main() {
	opts, err := app.NewOptions()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fs := pflag.CommandLine
	opts.AddFlags(fs)
	// The generic API server's feature gates, as karmada-aggregated-apiserver
	// takes them. Only the binary has the flag: it closes the process-wide
	// gate to new gates, which an in-process caller may still be adding.
	utilfeature.DefaultMutableFeatureGate.AddFlag(fs)
	klogFlags := goflag.NewFlagSet("klog", goflag.ExitOnError)
	klog.InitFlags(klogFlags)
	fs.AddGoFlagSet(klogFlags)
	version := fs.Bool("version", false, "Print the release and exit.")
	pflag.Parse()
	if *version {
		fmt.Println(release.Version)
		return
	}
	ctx := genericapiserver.SetupSignalContext()
	if err := app.Run(ctx, opts); err != nil {
		klog.ErrorS(err, "Aggregated API server failed")
		klog.FlushAndExit(klog.ExitFlushTimeout, 1)
	}
}
