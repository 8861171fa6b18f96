// Command metrics-adapter serves metrics.k8s.io and custom.metrics.k8s.io
// in the control plane, aggregated over the Ready member clusters, as
// karmada-metrics-adapter does; APIServices register it with the control
// plane's API server.
package main

import (
	goflag "flag"

	"github.com/spf13/pflag"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/flotilla-io/flotilla/components/metrics-adapter/app"
)

func main() {
	opts := app.NewOptions()
	fs := pflag.CommandLine
	opts.AddFlags(fs)
	klogFlags := goflag.NewFlagSet("klog", goflag.ExitOnError)
	klog.InitFlags(klogFlags)
	fs.AddGoFlagSet(klogFlags)
	pflag.Parse()
	log.SetLogger(klog.NewKlogr())
	ctx := genericapiserver.SetupSignalContext()
	if err := app.Run(log.IntoContext(ctx, klog.NewKlogr()), opts); err != nil {
		klog.ErrorS(err, "Metrics adapter failed")
		klog.FlushAndExit(klog.ExitFlushTimeout, 1)
	}
}
