// franz-go (kgo, kadm) against a broker, for tests/integration/test_newest_franz_go.py.
// Built by tests/integration/newest_clients.py into the test cache.
//
//	franzgo_client produce BOOTSTRAP TOPIC FIRST COUNT
//	franzgo_client consume BOOTSTRAP GROUP TOPIC EXPECTED TIMEOUT_S
//	franzgo_client metadata BOOTSTRAP CREATE_TOPIC
//
// Every command prints JSON lines on stdout: events ({"event": ...}) and one
// last {"result": {...}}. Logs go to stderr (EDDY_CLIENT_DEBUG=1: debug).
// Client defaults are kept (idempotent producer, cooperative-sticky group
// balancer); auto commit is off so that the commit is explicit and checked.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

func emit(v map[string]any) {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	fmt.Println(string(b))
}

func result(r map[string]any) { emit(map[string]any{"result": r}) }

func errString(err error) any {
	if err == nil {
		return nil
	}
	return err.Error()
}

func baseOpts(bootstrap string) []kgo.Opt {
	level := kgo.LogLevelWarn
	if os.Getenv("EDDY_CLIENT_DEBUG") != "" {
		level = kgo.LogLevelDebug
	}
	return []kgo.Opt{
		kgo.SeedBrokers(bootstrap),
		kgo.ClientID("eddy-it-franzgo"),
		kgo.WithLogger(kgo.BasicLogger(os.Stderr, level, func() string {
			return time.Now().Format("15:04:05.000 ")
		})),
		kgo.RetryTimeout(20 * time.Second),
	}
}

func produce(bootstrap, topic string, first, count int) {
	cl, err := kgo.NewClient(append(baseOpts(bootstrap), kgo.RequiredAcks(kgo.AllISRAcks()))...)
	if err != nil {
		result(map[string]any{"fatal": err.Error()})
		return
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	type outcome struct {
		partition int32
		err       error
	}
	done := make(chan outcome, count)
	for i := first; i < first+count; i++ {
		rec := &kgo.Record{Topic: topic, Key: []byte(fmt.Sprintf("k-%d", i%11)), Value: []byte(fmt.Sprintf("v-%06d", i))}
		cl.Produce(ctx, rec, func(r *kgo.Record, err error) { done <- outcome{r.Partition, err} })
	}
	flushErr := cl.Flush(ctx)
	delivered := 0
	errs := []string{}
	partitions := map[string]int{}
	for i := 0; i < count; i++ {
		select {
		case o := <-done:
			if o.err != nil {
				if len(errs) < 10 {
					errs = append(errs, o.err.Error())
				}
				continue
			}
			delivered++
			partitions[strconv.Itoa(int(o.partition))]++
		case <-ctx.Done():
			errs = append(errs, "timed out waiting for delivery reports")
			i = count
		}
	}
	id, epoch, idErr := cl.ProducerID(ctx)
	result(map[string]any{"delivered": delivered, "errors": errs, "partitions": partitions,
		"flush_error": errString(flushErr), "producer_id": id, "producer_epoch": epoch,
		"producer_id_error": errString(idErr)})
}

func consume(bootstrap, group, topic string, expected int, timeout time.Duration) {
	opts := append(baseOpts(bootstrap),
		kgo.ConsumerGroup(group),
		kgo.ConsumeTopics(topic),
		kgo.DisableAutoCommit(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.SessionTimeout(10*time.Second),
		kgo.HeartbeatInterval(1*time.Second),
		kgo.FetchMaxWait(500*time.Millisecond),
		kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, assigned map[string][]int32) {
			emit(map[string]any{"event": "assigned", "partitions": assigned})
		}),
	)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		result(map[string]any{"fatal": err.Error()})
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	records := [][]any{}
	errs := []string{}
	for len(records) < expected && ctx.Err() == nil {
		fetches := cl.PollRecords(ctx, expected-len(records))
		fetches.EachError(func(t string, p int32, err error) {
			if err != context.DeadlineExceeded && len(errs) < 10 {
				errs = append(errs, fmt.Sprintf("%s-%d: %v", t, p, err))
			}
		})
		fetches.EachRecord(func(r *kgo.Record) {
			records = append(records, []any{r.Topic, r.Partition, r.Offset, string(r.Value)})
		})
	}
	cctx, ccancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer ccancel()
	commitErr := cl.CommitUncommittedOffsets(cctx)
	committed := map[string]int64{}
	for t, ps := range cl.CommittedOffsets() {
		for p, eo := range ps {
			committed[fmt.Sprintf("%s-%d", t, p)] = eo.Offset
		}
	}
	leaveErr := cl.LeaveGroupContext(cctx)
	cl.Close()
	result(map[string]any{"records": records, "errors": errs, "commit_error": errString(commitErr),
		"committed": committed, "leave_error": errString(leaveErr)})
}

func metadata(bootstrap, create string) {
	cl, err := kgo.NewClient(baseOpts(bootstrap)...)
	if err != nil {
		result(map[string]any{"fatal": err.Error()})
		return
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out := map[string]any{}

	created, err := adm.CreateTopics(ctx, 2, 1, nil, create)
	out["create_error"] = errString(err)
	if err == nil {
		r := created[create]
		out["create_topic_error"] = errString(r.Err)
	}

	topics, err := adm.ListTopics(ctx)
	out["list_error"] = errString(err)
	names := map[string]any{}
	for name, d := range topics {
		names[name] = map[string]any{"partitions": len(d.Partitions), "error": errString(d.Err),
			"id": d.ID.String()}
	}
	out["topics"] = names

	brokers, err := adm.ListBrokers(ctx)
	out["brokers_error"] = errString(err)
	hosts := []string{}
	for _, b := range brokers {
		hosts = append(hosts, fmt.Sprintf("%s:%d", b.Host, b.Port))
	}
	sort.Strings(hosts)
	out["brokers"] = hosts

	ends, err := adm.ListEndOffsets(ctx, create)
	out["end_offsets_error"] = errString(err)
	if err == nil {
		eo := map[string]any{}
		ends.Each(func(o kadm.ListedOffset) {
			eo[strconv.Itoa(int(o.Partition))] = map[string]any{"offset": o.Offset, "error": errString(o.Err)}
		})
		out["end_offsets"] = eo
	}
	result(out)
}

func atoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		fmt.Fprintln(os.Stderr, "not a number:", s)
		os.Exit(2)
	}
	return n
}

func main() {
	a := os.Args[1:]
	switch {
	case len(a) == 5 && a[0] == "produce":
		produce(a[1], a[2], atoi(a[3]), atoi(a[4]))
	case len(a) == 6 && a[0] == "consume":
		consume(a[1], a[2], a[3], atoi(a[4]), time.Duration(atoi(a[5]))*time.Second)
	case len(a) == 3 && a[0] == "metadata":
		metadata(a[1], a[2])
	default:
		fmt.Fprintln(os.Stderr, "usage: franzgo_client produce BOOTSTRAP TOPIC FIRST COUNT | "+
			"consume BOOTSTRAP GROUP TOPIC EXPECTED TIMEOUT_S | metadata BOOTSTRAP CREATE_TOPIC")
		os.Exit(2)
	}
}
