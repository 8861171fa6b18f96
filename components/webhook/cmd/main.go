// Command webhook is Flotilla's admission webhook (container command
// /flotilla-webhook): it defaults and validates the Karmada API's objects
// and converts ResourceBindings between work.karmada.io versions, on the
// same paths as karmada-webhook.
package main

import (
	"flag"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/flotilla-io/flotilla/components/webhook/app"
	"github.com/flotilla-io/flotilla/internal/componentmain"
)

func main() {
	var opts app.Options
	opts.BindFlags(flag.CommandLine)
	logger := componentmain.Setup(componentmain.Options{MemoryLimit: true})
	// The first SIGTERM or SIGINT stops the listeners and lets requests in
	// flight finish (--graceful-shutdown-timeout); a second one exits at once.
	if err := app.Run(ctrl.SetupSignalHandler(), ctrl.GetConfigOrDie(), opts, logger); err != nil {
		componentmain.Failed(logger.WithName("setup"), "webhook", err)
	}
}
