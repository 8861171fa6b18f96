package estimatorrpc

import (
	"context"
	"net"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
)

// karmadaSchema describes the messages as Karmada's estimator.proto declares
// them, so the real protobuf library encodes and decodes them here and the
// hand-written codec is checked against it, not against itself.
func karmadaSchema(t *testing.T) protoreflect.FileDescriptor {
	t.Helper()
	str := descriptorpb.FieldDescriptorProto_TYPE_STRING.Enum()
	byt := descriptorpb.FieldDescriptorProto_TYPE_BYTES.Enum()
	i32 := descriptorpb.FieldDescriptorProto_TYPE_INT32.Enum()
	i64 := descriptorpb.FieldDescriptorProto_TYPE_INT64.Enum()
	msg := descriptorpb.FieldDescriptorProto_TYPE_MESSAGE.Enum()
	opt := descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum()
	rep := descriptorpb.FieldDescriptorProto_LABEL_REPEATED.Enum()
	const pkg = ".github.com.karmada_io.karmada.pkg.estimator.pb."
	field := func(name string, num int32, label *descriptorpb.FieldDescriptorProto_Label, typ *descriptorpb.FieldDescriptorProto_Type, typeName string) *descriptorpb.FieldDescriptorProto {
		f := &descriptorpb.FieldDescriptorProto{Name: proto.String(name), JsonName: proto.String(name), Number: proto.Int32(num), Label: label, Type: typ}
		if typeName != "" {
			f.TypeName = proto.String(typeName)
		}
		return f
	}
	entry := func(name, valueType string, value *descriptorpb.FieldDescriptorProto_Type) *descriptorpb.DescriptorProto {
		return &descriptorpb.DescriptorProto{
			Name:    proto.String(name),
			Field:   []*descriptorpb.FieldDescriptorProto{field("key", 1, opt, str, ""), field("value", 2, opt, value, valueType)},
			Options: &descriptorpb.MessageOptions{MapEntry: proto.Bool(true)},
		}
	}
	message := func(name string, fields ...*descriptorpb.FieldDescriptorProto) *descriptorpb.DescriptorProto {
		return &descriptorpb.DescriptorProto{Name: proto.String(name), Field: fields}
	}
	nodeClaim := message("NodeClaim",
		field("nodeSelector", 2, rep, msg, pkg+"NodeClaim.NodeSelectorEntry"),
		field("nodeAffinityBytes", 4, opt, byt, ""),
		field("tolerationsBytes", 5, rep, byt, ""),
	)
	nodeClaim.NestedType = []*descriptorpb.DescriptorProto{entry("NodeSelectorEntry", "", str)}
	replicaRequirements := message("ReplicaRequirements",
		field("nodeClaim", 1, opt, msg, pkg+"NodeClaim"),
		field("namespace", 3, opt, str, ""),
		field("priorityClassName", 4, opt, str, ""),
		field("resourceRequestBytes", 5, rep, msg, pkg+"ReplicaRequirements.ResourceRequestBytesEntry"),
	)
	replicaRequirements.NestedType = []*descriptorpb.DescriptorProto{entry("ResourceRequestBytesEntry", "", byt)}
	componentRequirements := message("ComponentReplicaRequirements",
		field("nodeClaim", 1, opt, msg, pkg+"NodeClaim"),
		field("priorityClassName", 3, opt, str, ""),
		field("resourceRequestBytes", 4, rep, msg, pkg+"ComponentReplicaRequirements.ResourceRequestBytesEntry"),
	)
	componentRequirements.NestedType = []*descriptorpb.DescriptorProto{entry("ResourceRequestBytesEntry", "", byt)}
	file := &descriptorpb.FileDescriptorProto{
		Name:    proto.String("pkg/estimator/pb/estimator.proto"),
		Package: proto.String("github.com.karmada_io.karmada.pkg.estimator.pb"),
		Syntax:  proto.String("proto3"),
		MessageType: []*descriptorpb.DescriptorProto{
			nodeClaim, replicaRequirements, componentRequirements,
			message("Component",
				field("name", 1, opt, str, ""),
				field("replicaRequirements", 2, opt, msg, pkg+"ComponentReplicaRequirements"),
				field("replicas", 3, opt, i32, "")),
			message("AssumedWorkload",
				field("namespace", 1, opt, str, ""),
				field("components", 2, rep, msg, pkg+"Component")),
			message("MaxAvailableReplicasRequest",
				field("cluster", 1, opt, str, ""),
				field("replicaRequirements", 2, opt, msg, pkg+"ReplicaRequirements"),
				field("assumedWorkloads", 3, rep, msg, pkg+"AssumedWorkload")),
			message("MaxAvailableReplicasResponse", field("maxReplicas", 1, opt, i32, "")),
			message("MaxAvailableComponentSetsRequest",
				field("cluster", 1, opt, str, ""),
				field("components", 2, rep, msg, pkg+"Component"),
				field("namespace", 3, opt, str, ""),
				field("assumedWorkloads", 4, rep, msg, pkg+"AssumedWorkload")),
			message("ObjectReference",
				field("apiVersion", 1, opt, str, ""),
				field("kind", 2, opt, str, ""),
				field("namespace", 3, opt, str, ""),
				field("name", 4, opt, str, "")),
			message("UnschedulableReplicasRequest",
				field("cluster", 1, opt, str, ""),
				field("resource", 2, opt, msg, pkg+"ObjectReference"),
				field("unschedulableThreshold", 3, opt, i64, "")),
			message("UnschedulableReplicasResponse", field("unschedulableReplicas", 1, opt, i32, "")),
		},
	}
	fd, err := protodesc.NewFile(file, nil)
	if err != nil {
		t.Fatalf("building Karmada's schema: %v", err)
	}
	return fd
}

func sampleRequest() *MaxAvailableReplicasRequest {
	return &MaxAvailableReplicasRequest{
		Cluster: "member1",
		ReplicaRequirements: ReplicaRequirements{
			NodeClaim: &NodeClaim{
				NodeAffinity: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
					MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a", "b"}}},
				}}},
				NodeSelector: map[string]string{"disk": "ssd", "gpu": "none"},
				Tolerations: []corev1.Toleration{
					{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "batch", Effect: corev1.TaintEffectNoSchedule},
					{Operator: corev1.TolerationOpExists},
				},
			},
			ResourceRequest:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
			Namespace:         "shop",
			PriorityClassName: "high",
		},
		AssumedWorkloads: []AssumedWorkload{{
			Namespace: "shop",
			Components: []Component{{
				Name:                "web",
				Replicas:            3,
				ReplicaRequirements: ComponentReplicaRequirements{ResourceRequest: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}},
			}},
		}},
	}
}

// TestKarmadaReadsWhatWeWrite encodes with this package and decodes with the
// protobuf library and Karmada's schema: every field lands where Karmada
// reads it.
func TestKarmadaReadsWhatWeWrite(t *testing.T) {
	fd := karmadaSchema(t)
	req := sampleRequest()
	wire, err := req.appendTo(nil)
	if err != nil {
		t.Fatal(err)
	}
	m := dynamicpb.NewMessage(fd.Messages().ByName("MaxAvailableReplicasRequest"))
	if err := proto.Unmarshal(wire, m); err != nil {
		t.Fatalf("protobuf cannot read our request: %v", err)
	}
	if got := m.Get(m.Descriptor().Fields().ByName("cluster")).String(); got != "member1" {
		t.Errorf("cluster = %q", got)
	}
	rr := m.Get(m.Descriptor().Fields().ByName("replicaRequirements")).Message()
	rrFields := rr.Descriptor().Fields()
	if got := rr.Get(rrFields.ByName("namespace")).String(); got != "shop" {
		t.Errorf("namespace = %q", got)
	}
	if got := rr.Get(rrFields.ByName("priorityClassName")).String(); got != "high" {
		t.Errorf("priorityClassName = %q", got)
	}
	resources := rr.Get(rrFields.ByName("resourceRequestBytes")).Map()
	var cpu resource.Quantity
	if err := cpu.Unmarshal(resources.Get(protoreflect.ValueOfString("cpu").MapKey()).Bytes()); err != nil || cpu.MilliValue() != 250 {
		t.Errorf("resourceRequestBytes[cpu] = %v (%v), want 250m", cpu.String(), err)
	}
	claim := rr.Get(rrFields.ByName("nodeClaim")).Message()
	claimFields := claim.Descriptor().Fields()
	if got := claim.Get(claimFields.ByName("nodeSelector")).Map().Get(protoreflect.ValueOfString("disk").MapKey()).String(); got != "ssd" {
		t.Errorf("nodeSelector[disk] = %q", got)
	}
	var affinity corev1.NodeSelector
	if err := affinity.Unmarshal(claim.Get(claimFields.ByName("nodeAffinityBytes")).Bytes()); err != nil {
		t.Fatal(err)
	}
	if !equality.Semantic.DeepEqual(&affinity, req.ReplicaRequirements.NodeClaim.NodeAffinity) {
		t.Errorf("nodeAffinityBytes = %v", affinity)
	}
	if n := claim.Get(claimFields.ByName("tolerationsBytes")).List().Len(); n != 2 {
		t.Errorf("tolerationsBytes has %d items, want 2", n)
	}
	assumed := m.Get(m.Descriptor().Fields().ByName("assumedWorkloads")).List()
	if assumed.Len() != 1 {
		t.Fatalf("assumedWorkloads has %d items", assumed.Len())
	}
	component := assumed.Get(0).Message().Get(assumed.Get(0).Message().Descriptor().Fields().ByName("components")).List().Get(0).Message()
	if got := component.Get(component.Descriptor().Fields().ByName("replicas")).Int(); got != 3 {
		t.Errorf("components[0].replicas = %d", got)
	}

	// And back: what protobuf writes from that message reads as the request.
	again, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var parsed MaxAvailableReplicasRequest
	if err := parsed.parse(again); err != nil {
		t.Fatal(err)
	}
	if !equality.Semantic.DeepEqual(&parsed, req) {
		t.Errorf("round trip through protobuf changed the request:\n got %+v\nwant %+v", parsed, *req)
	}
}

// TestOlderRequests reads a request in the encoding of Karmada releases
// before the bytes fields: an embedded NodeSelector at field 1, Tolerations
// at 3 and quantities at 2.
func TestOlderRequests(t *testing.T) {
	affinity := &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{"n1"}}}}}}
	toleration := corev1.Toleration{Key: "k", Operator: corev1.TolerationOpExists}
	cpu := resource.MustParse("2")
	var claim, rr []byte
	var err error
	if claim, err = appendKube(claim, nodeClaimNodeAffinityOld, affinity); err != nil {
		t.Fatal(err)
	}
	if claim, err = appendKube(claim, nodeClaimTolerationsOld, &toleration); err != nil {
		t.Fatal(err)
	}
	rr = appendBytes(rr, replicaNodeClaim, claim)
	quantity, _ := cpu.Marshal()
	rr = appendBytes(rr, replicaResourceRequestOld, appendBytes(appendString(nil, 1, "cpu"), 2, quantity))
	wire := appendBytes(appendString(nil, maxReplicasCluster, "m"), maxReplicasRequirements, rr)
	// A field this package does not know is skipped, not an error.
	wire = appendString(wire, 99, "from the future")

	var got MaxAvailableReplicasRequest
	if err := got.parse(wire); err != nil {
		t.Fatal(err)
	}
	want := MaxAvailableReplicasRequest{Cluster: "m", ReplicaRequirements: ReplicaRequirements{
		NodeClaim:       &NodeClaim{NodeAffinity: affinity, Tolerations: []corev1.Toleration{toleration}},
		ResourceRequest: corev1.ResourceList{corev1.ResourceCPU: cpu},
	}}
	if !equality.Semantic.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
}

func TestMalformed(t *testing.T) {
	for name, wire := range map[string][]byte{
		"truncated":           {0x0a, 0x05, 'a'},
		"string as varint":    protowire.AppendVarint(protowire.AppendTag(nil, maxReplicasCluster, protowire.VarintType), 1),
		"bad quantity":        appendBytes(nil, maxReplicasRequirements, appendBytes(nil, replicaResourceRequest, appendBytes(appendString(nil, 1, "cpu"), 2, []byte{0xff}))),
		"bad node affinity":   appendBytes(nil, maxReplicasRequirements, appendBytes(nil, replicaNodeClaim, appendBytes(nil, nodeClaimNodeAffinityBytes, []byte{0x0a, 0x09}))),
		"bad tag":             {0x00},
		"unknown bad payload": {0xfa, 0x06, 0x05},
	} {
		t.Run(name, func(t *testing.T) {
			var r MaxAvailableReplicasRequest
			if err := r.parse(wire); err == nil {
				t.Errorf("parsed %x without an error: %+v", wire, r)
			}
		})
	}
}

type fakeEstimator struct {
	gotReplicas *MaxAvailableReplicasRequest
	gotSets     *MaxAvailableComponentSetsRequest
	gotUnsched  *UnschedulableReplicasRequest
}

func (f *fakeEstimator) MaxAvailableReplicas(_ context.Context, r *MaxAvailableReplicasRequest) (*MaxAvailableReplicasResponse, error) {
	f.gotReplicas = r
	if r.Cluster != "member1" {
		return nil, status.Errorf(codes.InvalidArgument, "cluster: %q is not member1", r.Cluster)
	}
	return &MaxAvailableReplicasResponse{MaxReplicas: 7}, nil
}

func (f *fakeEstimator) MaxAvailableComponentSets(_ context.Context, r *MaxAvailableComponentSetsRequest) (*MaxAvailableComponentSetsResponse, error) {
	f.gotSets = r
	return &MaxAvailableComponentSetsResponse{MaxSets: 2}, nil
}

func (f *fakeEstimator) GetUnschedulableReplicas(_ context.Context, r *UnschedulableReplicasRequest) (*UnschedulableReplicasResponse, error) {
	f.gotUnsched = r
	return &UnschedulableReplicasResponse{UnschedulableReplicas: 4}, nil
}

func serve(t *testing.T, opts ...grpc.ServerOption) (*grpc.Server, *grpc.ClientConn) {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := grpc.NewServer(opts...)
	t.Cleanup(s.Stop)
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	go func() { _ = s.Serve(lis) }()
	return s, conn
}

// TestOverGRPC calls every method through a real connection, with an
// interceptor on the server as real servers have (metrics, logging).
func TestOverGRPC(t *testing.T) {
	var intercepted []string
	s, conn := serve(t, ServerCodec(), grpc.UnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, next grpc.UnaryHandler) (any, error) {
		intercepted = append(intercepted, info.FullMethod)
		return next(ctx, req)
	}))
	f := &fakeEstimator{}
	RegisterEstimatorServer(s, f)
	c := NewClient(conn)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()

	resp, err := c.MaxAvailableReplicas(ctx, sampleRequest())
	if err != nil || resp.MaxReplicas != 7 {
		t.Fatalf("MaxAvailableReplicas = %+v, %v", resp, err)
	}
	if !equality.Semantic.DeepEqual(f.gotReplicas, sampleRequest()) {
		t.Errorf("server got %+v", f.gotReplicas)
	}
	sets, err := c.MaxAvailableComponentSets(ctx, &MaxAvailableComponentSetsRequest{Cluster: "member1", Namespace: "ns", Components: sampleRequest().AssumedWorkloads[0].Components})
	if err != nil || sets.MaxSets != 2 || f.gotSets.Components[0].Name != "web" {
		t.Fatalf("MaxAvailableComponentSets = %+v, %v (server got %+v)", sets, err, f.gotSets)
	}
	unsched, err := c.GetUnschedulableReplicas(ctx, &UnschedulableReplicasRequest{Cluster: "member1", Resource: ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "ns", Name: "web"}, UnschedulableThreshold: 5 * time.Minute})
	if err != nil || unsched.UnschedulableReplicas != 4 || f.gotUnsched.UnschedulableThreshold != 5*time.Minute || f.gotUnsched.Resource.Name != "web" {
		t.Fatalf("GetUnschedulableReplicas = %+v, %v (server got %+v)", unsched, err, f.gotUnsched)
	}
	if _, err := c.MaxAvailableReplicas(ctx, &MaxAvailableReplicasRequest{Cluster: "other"}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("error for another cluster = %v, want InvalidArgument", err)
	}
	if len(intercepted) != 4 || intercepted[0] != "/"+ServiceName+"/"+MethodMaxAvailableReplicas {
		t.Errorf("interceptor saw %v", intercepted)
	}
}

// TestAgainstProtobufServer calls a server that knows only Karmada's schema
// and gRPC's own protobuf codec, as karmada-scheduler-estimator does.
func TestAgainstProtobufServer(t *testing.T) {
	fd := karmadaSchema(t)
	requestType := fd.Messages().ByName("UnschedulableReplicasRequest")
	responseType := fd.Messages().ByName("UnschedulableReplicasResponse")
	var got *dynamicpb.Message
	s, conn := serve(t)
	s.RegisterService(&grpc.ServiceDesc{
		ServiceName: ServiceName,
		HandlerType: (*any)(nil),
		Methods: []grpc.MethodDesc{{
			MethodName: MethodGetUnschedulableReplicas,
			Handler: func(_ any, _ context.Context, decode func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
				got = dynamicpb.NewMessage(requestType)
				if err := decode(got); err != nil {
					return nil, err
				}
				resp := dynamicpb.NewMessage(responseType)
				resp.Set(responseType.Fields().ByName("unschedulableReplicas"), protoreflect.ValueOfInt32(3))
				return resp, nil
			},
		}},
	}, struct{}{})

	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	resp, err := NewClient(conn).GetUnschedulableReplicas(ctx, &UnschedulableReplicasRequest{
		Cluster:                "member2",
		Resource:               ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "ns", Name: "web"},
		UnschedulableThreshold: time.Minute,
	})
	if err != nil || resp.UnschedulableReplicas != 3 {
		t.Fatalf("GetUnschedulableReplicas = %+v, %v", resp, err)
	}
	if v := got.Get(requestType.Fields().ByName("unschedulableThreshold")).Int(); v != int64(time.Minute) {
		t.Errorf("unschedulableThreshold = %d", v)
	}
	ref := got.Get(requestType.Fields().ByName("resource")).Message()
	if v := ref.Get(ref.Descriptor().Fields().ByName("kind")).String(); v != "Deployment" {
		t.Errorf("resource.kind = %q", v)
	}
}
