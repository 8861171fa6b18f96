package webhook

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/uuid"

	configv1alpha1 "github.com/flotilla-io/flotilla/api/config/v1alpha1"
)

// maxResponseBytes bounds a webhook's answer; objects are at most a few MiB.
const maxResponseBytes = 32 << 20

// ErrWebhook is wrapped by every failure of a webhook call.
var ErrWebhook = errors.New("interpreter webhook failed")

func newTransport(caBundle []byte, serverName string) (*http.Transport, error) {
	tlsConfig := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: serverName}
	if len(caBundle) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(caBundle) {
			return nil, fmt.Errorf("clientConfig.caBundle holds no PEM certificate")
		}
		tlsConfig.RootCAs = pool
	}
	return &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		TLSClientConfig:     tlsConfig,
		TLSHandshakeTimeout: 10 * time.Second,
		ForceAttemptHTTP2:   true,
		MaxIdleConnsPerHost: 16,
		IdleConnTimeout:     90 * time.Second,
	}, nil
}

// request builds the question for obj; observed is set for Retain, status
// reflection and health.
func request(op configv1alpha1.InterpreterOperation, obj, observed *unstructured.Unstructured) (*configv1alpha1.ResourceInterpreterRequest, error) {
	raw, err := json.Marshal(obj.Object)
	if err != nil {
		return nil, fmt.Errorf("encoding object: %w", err)
	}
	gvk := obj.GroupVersionKind()
	req := &configv1alpha1.ResourceInterpreterRequest{
		UID:       uuid.NewUUID(),
		Kind:      metav1.GroupVersionKind{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind},
		Name:      obj.GetName(),
		Namespace: obj.GetNamespace(),
		Operation: op,
		Object:    runtime.RawExtension{Raw: raw},
	}
	if observed != nil {
		if observed == obj {
			req.ObservedObject = &runtime.RawExtension{Raw: raw}
		} else {
			o, err := json.Marshal(observed.Object)
			if err != nil {
				return nil, fmt.Errorf("encoding observed object: %w", err)
			}
			req.ObservedObject = &runtime.RawExtension{Raw: o}
		}
	}
	return req, nil
}

// call POSTs the request to the webhook and returns its successful answer.
func (h *hook) call(ctx context.Context, req *configv1alpha1.ResourceInterpreterRequest) (*configv1alpha1.ResourceInterpreterResponse, error) {
	if h.err != nil {
		return nil, fmt.Errorf("%w: %w", ErrWebhook, h.err)
	}
	resp, err := h.post(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("%w: webhook %s (%s): %w", ErrWebhook, h.uid, h.url, err)
	}
	return resp, nil
}

func (h *hook) post(ctx context.Context, req *configv1alpha1.ResourceInterpreterRequest) (*configv1alpha1.ResourceInterpreterResponse, error) {
	body, err := json.Marshal(&configv1alpha1.ResourceInterpreterContext{
		TypeMeta: metav1.TypeMeta{APIVersion: configv1alpha1.GroupVersion.String(), Kind: "ResourceInterpreterContext"},
		Request:  req,
	})
	if err != nil {
		return nil, fmt.Errorf("encoding request: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, h.timeout)
	defer cancel()
	httpReq, err := http.NewRequestWithContext(ctx, http.MethodPost, h.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	httpReq.Header.Set("Content-Type", "application/json")
	httpReq.Header.Set("Accept", "application/json")
	start := time.Now()
	httpResp, err := h.client.Do(httpReq)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("no answer within %s: %w", time.Since(start).Round(time.Millisecond), ctx.Err())
		}
		return nil, err
	}
	defer func() { _ = httpResp.Body.Close() }()
	data, err := io.ReadAll(io.LimitReader(httpResp.Body, maxResponseBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading answer: %w", err)
	}
	if len(data) > maxResponseBytes {
		return nil, fmt.Errorf("answer larger than %d MiB", maxResponseBytes>>20)
	}
	if httpResp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP %d: %s", httpResp.StatusCode, bytes.TrimSpace(truncate(data, 256)))
	}
	var answer configv1alpha1.ResourceInterpreterContext
	if err := json.Unmarshal(data, &answer); err != nil {
		return nil, fmt.Errorf("decoding answer: %w", err)
	}
	resp := answer.Response
	switch {
	case resp == nil:
		return nil, fmt.Errorf("answer has no response")
	case resp.UID != req.UID:
		return nil, fmt.Errorf("answer is for request %q, not %q", resp.UID, req.UID)
	case !resp.Successful:
		if resp.Status != nil {
			return nil, fmt.Errorf("webhook answered unsuccessfully (code %d): %s", resp.Status.Code, resp.Status.Message)
		}
		return nil, fmt.Errorf("webhook answered unsuccessfully")
	}
	return resp, nil
}

func truncate(b []byte, n int) []byte {
	if len(b) > n {
		return b[:n]
	}
	return b
}
