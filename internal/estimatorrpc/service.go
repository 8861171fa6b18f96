package estimatorrpc

import (
	"context"
	"fmt"

	"google.golang.org/grpc"
	"google.golang.org/grpc/mem"
)

// ServiceName is the estimator's gRPC service, as Karmada names it.
const ServiceName = "github.com.karmada_io.karmada.pkg.estimator.service.Estimator"

// Method names of the service.
const (
	MethodMaxAvailableReplicas      = "MaxAvailableReplicas"
	MethodMaxAvailableComponentSets = "MaxAvailableComponentSets"
	MethodGetUnschedulableReplicas  = "GetUnschedulableReplicas"
)

// EstimatorServer is what an estimator answers.
type EstimatorServer interface {
	MaxAvailableReplicas(context.Context, *MaxAvailableReplicasRequest) (*MaxAvailableReplicasResponse, error)
	MaxAvailableComponentSets(context.Context, *MaxAvailableComponentSetsRequest) (*MaxAvailableComponentSetsResponse, error)
	GetUnschedulableReplicas(context.Context, *UnschedulableReplicasRequest) (*UnschedulableReplicasResponse, error)
}

// codec encodes the messages of this package under the name "proto", so the
// content type on the wire is the one protobuf peers send and expect.
type codec struct{}

func (codec) Name() string { return "proto" }

func (codec) Marshal(v any) (mem.BufferSlice, error) {
	m, ok := v.(message)
	if !ok {
		return nil, fmt.Errorf("estimatorrpc: cannot encode %T", v)
	}
	b, err := m.appendTo(nil)
	if err != nil {
		return nil, err
	}
	return mem.BufferSlice{mem.SliceBuffer(b)}, nil
}

func (codec) Unmarshal(data mem.BufferSlice, v any) error {
	m, ok := v.(message)
	if !ok {
		return fmt.Errorf("estimatorrpc: cannot decode into %T", v)
	}
	return m.parse(data.Materialize())
}

// ServerCodec is the server option every server serving RegisterEstimatorServer
// needs: it decodes this package's messages.
func ServerCodec() grpc.ServerOption {
	return grpc.ForceServerCodecV2(codec{})
}

// RegisterEstimatorServer serves srv on s, which must have been made with
// ServerCodec.
func RegisterEstimatorServer(s *grpc.Server, srv EstimatorServer) {
	s.RegisterService(&serviceDesc, srv)
}

var serviceDesc = grpc.ServiceDesc{
	ServiceName: ServiceName,
	HandlerType: (*EstimatorServer)(nil),
	Methods: []grpc.MethodDesc{
		{MethodName: MethodMaxAvailableReplicas, Handler: handler(EstimatorServer.MaxAvailableReplicas)},
		{MethodName: MethodMaxAvailableComponentSets, Handler: handler(EstimatorServer.MaxAvailableComponentSets)},
		{MethodName: MethodGetUnschedulableReplicas, Handler: handler(EstimatorServer.GetUnschedulableReplicas)},
	},
	Metadata: "pkg/estimator/service/service.proto",
}

// handler adapts one method of EstimatorServer to gRPC's unary handler,
// running the server's interceptor if it has one.
func handler[Req any, Resp any, PReq interface {
	*Req
	message
}](call func(EstimatorServer, context.Context, PReq) (Resp, error)) func(any, context.Context, func(any) error, grpc.UnaryServerInterceptor) (any, error) {
	return func(srv any, ctx context.Context, decode func(any) error, interceptor grpc.UnaryServerInterceptor) (any, error) {
		req := PReq(new(Req))
		if err := decode(req); err != nil {
			return nil, err
		}
		if interceptor == nil {
			return call(srv.(EstimatorServer), ctx, req)
		}
		method, _ := grpc.Method(ctx)
		info := &grpc.UnaryServerInfo{Server: srv, FullMethod: method}
		return interceptor(ctx, req, info, func(ctx context.Context, req any) (any, error) {
			return call(srv.(EstimatorServer), ctx, req.(PReq))
		})
	}
}

// Client calls an estimator.
type Client struct {
	cc grpc.ClientConnInterface
}

// NewClient calls the estimator at the other end of cc.
func NewClient(cc grpc.ClientConnInterface) *Client {
	return &Client{cc: cc}
}

func (c *Client) invoke(ctx context.Context, method string, req, resp message, opts []grpc.CallOption) error {
	opts = append([]grpc.CallOption{grpc.ForceCodecV2(codec{})}, opts...)
	return c.cc.Invoke(ctx, "/"+ServiceName+"/"+method, req, resp, opts...)
}

// MaxAvailableReplicas asks how many replicas fit.
func (c *Client) MaxAvailableReplicas(ctx context.Context, req *MaxAvailableReplicasRequest, opts ...grpc.CallOption) (*MaxAvailableReplicasResponse, error) {
	resp := &MaxAvailableReplicasResponse{}
	if err := c.invoke(ctx, MethodMaxAvailableReplicas, req, resp, opts); err != nil {
		return nil, err
	}
	return resp, nil
}

// MaxAvailableComponentSets asks how many complete component sets fit.
func (c *Client) MaxAvailableComponentSets(ctx context.Context, req *MaxAvailableComponentSetsRequest, opts ...grpc.CallOption) (*MaxAvailableComponentSetsResponse, error) {
	resp := &MaxAvailableComponentSetsResponse{}
	if err := c.invoke(ctx, MethodMaxAvailableComponentSets, req, resp, opts); err != nil {
		return nil, err
	}
	return resp, nil
}

// GetUnschedulableReplicas asks how many replicas of a workload cannot be
// scheduled.
func (c *Client) GetUnschedulableReplicas(ctx context.Context, req *UnschedulableReplicasRequest, opts ...grpc.CallOption) (*UnschedulableReplicasResponse, error) {
	resp := &UnschedulableReplicasResponse{}
	if err := c.invoke(ctx, MethodGetUnschedulableReplicas, req, resp, opts); err != nil {
		return nil, err
	}
	return resp, nil
}
