package app

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	webhookconfig "github.com/flotilla-io/flotilla/config/webhook"
)

// Configurations returns the webhook configurations of config/webhook with
// every webhook called at baseURL (https://host:port) + its path instead of
// the karmada-webhook Service, trusting caBundle: how a webhook that runs
// outside the cluster, like the local federation's, is registered.
func Configurations(baseURL string, caBundle []byte) ([]client.Object, error) {
	baseURL = strings.TrimSuffix(baseURL, "/")
	url := func(cc *admissionregistrationv1.WebhookClientConfig) {
		path := ""
		if cc.Service != nil && cc.Service.Path != nil {
			path = *cc.Service.Path
		}
		u := baseURL + path
		*cc = admissionregistrationv1.WebhookClientConfig{URL: &u, CABundle: caBundle}
	}
	var objs []client.Object
	decoder := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(webhookconfig.Manifests)))
	for {
		doc, err := decoder.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("reading config/webhook/manifests.yaml: %w", err)
		}
		var meta struct{ Kind string }
		if err := yaml.Unmarshal(doc, &meta); err != nil {
			return nil, err
		}
		switch meta.Kind {
		case "MutatingWebhookConfiguration":
			c := &admissionregistrationv1.MutatingWebhookConfiguration{}
			if err := yaml.Unmarshal(doc, c); err != nil {
				return nil, err
			}
			for i := range c.Webhooks {
				url(&c.Webhooks[i].ClientConfig)
			}
			objs = append(objs, c)
		case "ValidatingWebhookConfiguration":
			c := &admissionregistrationv1.ValidatingWebhookConfiguration{}
			if err := yaml.Unmarshal(doc, c); err != nil {
				return nil, err
			}
			for i := range c.Webhooks {
				url(&c.Webhooks[i].ClientConfig)
			}
			objs = append(objs, c)
		case "":
		default:
			return nil, fmt.Errorf("config/webhook/manifests.yaml: unexpected %s", meta.Kind)
		}
	}
	return objs, nil
}

// RegisterConfigurations creates or replaces Configurations(baseURL,
// caBundle) through c.
func RegisterConfigurations(ctx context.Context, c client.Client, baseURL string, caBundle []byte) error {
	objs, err := Configurations(baseURL, caBundle)
	if err != nil {
		return err
	}
	for _, obj := range objs {
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			existing := obj.DeepCopyObject().(client.Object)
			if err := c.Get(ctx, client.ObjectKeyFromObject(obj), existing); apierrors.IsNotFound(err) {
				return c.Create(ctx, obj)
			} else if err != nil {
				return err
			}
			obj.SetResourceVersion(existing.GetResourceVersion())
			return c.Update(ctx, obj)
		})
		if err != nil {
			return fmt.Errorf("registering %s: %w", obj.GetName(), err)
		}
	}
	return nil
}

// RegisterConversion sets, on each CRD that config/webhook/conversion names,
// the conversion stanza pointing at baseURL + /convert with caBundle.
func RegisterConversion(ctx context.Context, c client.Client, baseURL string, caBundle []byte) error {
	files, err := fs.Glob(webhookconfig.Conversion, "conversion/*.yaml")
	if err != nil {
		return err
	}
	for _, file := range files {
		data, err := fs.ReadFile(webhookconfig.Conversion, file)
		if err != nil {
			return err
		}
		patch := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.Unmarshal(data, patch); err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		conv := patch.Spec.Conversion.DeepCopy()
		u := strings.TrimSuffix(baseURL, "/") + *conv.Webhook.ClientConfig.Service.Path
		conv.Webhook.ClientConfig = &apiextensionsv1.WebhookClientConfig{URL: &u, CABundle: caBundle}
		err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(patch), crd); err != nil {
				return err
			}
			crd.Spec.Conversion = conv
			return c.Update(ctx, crd)
		})
		if err != nil {
			return fmt.Errorf("setting the conversion webhook of %s: %w", patch.Name, err)
		}
	}
	return nil
}
