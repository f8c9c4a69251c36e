package rig;

import java.io.BufferedWriter;
import java.io.FileWriter;
import java.io.IOException;
import java.net.ConnectException;
import java.net.SocketTimeoutException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import com.netflix.niws.loadbalancer.DiscoveryEnabledServer;
import com.netflix.loadbalancer.Server;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.ApplicationArguments;
import org.springframework.boot.ApplicationRunner;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.LoadBalanced;
import org.springframework.cloud.client.loadbalancer.LoadBalancerClient;
import org.springframework.cloud.client.loadbalancer.LoadBalancerRequestTransformer;
import org.springframework.cloud.netflix.ribbon.RibbonLoadBalancerClient.RibbonServer;
import org.springframework.cloud.netflix.ribbon.SpringClientFactory;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.HttpEntity;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpRequest;
import org.springframework.http.ResponseEntity;
import org.springframework.http.client.SimpleClientHttpRequestFactory;
import org.springframework.util.ClassUtils;
import org.springframework.web.client.HttpStatusCodeException;
import org.springframework.web.client.ResourceAccessException;
import org.springframework.web.client.RestTemplate;

/**
 * Fixed-rate Ribbon caller WITH spring-retry (Spring Cloud Hoxton.SR12): the Ribbon caller of
 * ../caller-ribbon (same loop, HTTP client, timeouts and log line) with spring-retry on the
 * classpath, so the {@code @LoadBalanced RestTemplate} carries RetryLoadBalancerInterceptor: each
 * GET runs under a RetryTemplate with RibbonLoadBalancedRetryPolicy at Ribbon's defaults
 * (MaxAutoRetries=0, MaxAutoRetriesNextServer=1: at most two servers per request;
 * spring.cloud.loadbalancer.retry.enabled=true, its default, passed by rig.py because
 * compressed.properties turns it off for the other callers). Every attempt goes through
 * RibbonLoadBalancerClient#execute (RibbonStatsRecorder) and a failed one is also noted by
 * RibbonLoadBalancedRetryPolicy#registerThrowable, i.e. twice in ServerStats.
 *
 * Chosen instance: a LoadBalancerRequestTransformer bean is applied once per ATTEMPT (by the
 * LoadBalancerRequest that RetryLoadBalancerInterceptor builds for each attempt, with the instance
 * chosen for it); the caller keeps the list per request. The log line names the FIRST attempt's
 * instance and the FINAL outcome (ok even when only the retry succeeded); every request that took
 * more than one attempt is also written to caller-retries.csv beside the log
 * (send_epoch_ms,first_instance,final_instance,attempts).
 * Log line: send_epoch_ms,chosen_instance_id,outcome,latency_ms
 */
@SpringBootApplication
public class RetryCallerApp implements ApplicationRunner {
    private static final Logger log = LoggerFactory.getLogger(RetryCallerApp.class);

    /** The instances Ribbon chose for the current request's attempts on this thread, in order. */
    static final ThreadLocal<java.util.List<String>> CHOSEN = ThreadLocal.withInitial(java.util.ArrayList::new);

    /** Connection: close on every request (and http.keepAlive=false): a new TCP connection each time. */
    private static final HttpEntity<Void> CLOSE;
    static {
        HttpHeaders h = new HttpHeaders();
        h.set("Connection", "close");
        CLOSE = new HttpEntity<>(h);
    }

    private final ApplicationContext ctx;
    private final RestTemplate rest;

    @Value("${caller.log-file:caller.csv}") String logFile;
    @Value("${caller.period-ms:50}") long periodMs;
    @Value("${caller.service-id:svc}") String serviceId;
    @Value("${caller.pool-size:64}") int poolSize;
    @Value("${caller.ribbon-probe-ms:0}") long probeMs;
    @Value("${caller.ribbon-probe-file:caller-ribbon-probe.csv}") String probeFile;

    private BufferedWriter out;
    private BufferedWriter retries;

    public RetryCallerApp(ApplicationContext ctx, @LoadBalanced RestTemplate rest) {
        this.ctx = ctx;
        this.rest = rest;
    }

    public static void main(String[] args) {
        // No persistent connections: every request opens a new TCP connection.
        System.setProperty("http.keepAlive", "false");
        SpringApplication.run(RetryCallerApp.class, args);
    }

    /** The beans a Ribbon application declares (in a class of their own: the app injects them). */
    @Configuration(proxyBeanMethods = false)
    static class Beans {
        @Bean
        @LoadBalanced
        RestTemplate restTemplate(@Value("${caller.connect-timeout-ms:500}") int connectTimeoutMs,
                                  @Value("${caller.read-timeout-ms:1000}") int readTimeoutMs) {
            SimpleClientHttpRequestFactory f = new SimpleClientHttpRequestFactory();
            f.setConnectTimeout(connectTimeoutMs);
            f.setReadTimeout(readTimeoutMs);
            return new RestTemplate(f);
        }

        /**
         * Called by LoadBalancerRequestFactory inside RibbonLoadBalancerClient#execute with the
         * server Ribbon chose for this attempt, before its HTTP request: only notes its instance id.
         */
        @Bean
        LoadBalancerRequestTransformer noteChosenInstance() {
            return (HttpRequest request, ServiceInstance instance) -> {
                CHOSEN.get().add(instanceId(instance));
                return request;
            };
        }
    }

    static String instanceId(ServiceInstance instance) {
        if (instance instanceof RibbonServer) {
            Server s = ((RibbonServer) instance).getServer();
            if (s instanceof DiscoveryEnabledServer) {
                return ((DiscoveryEnabledServer) s).getInstanceInfo().getInstanceId();
            }
            return s.getId();
        }
        return instance.getInstanceId();
    }

    @Override
    public void run(ApplicationArguments args) throws Exception {
        LoadBalancerClient lbc = ctx.getBean(LoadBalancerClient.class);
        log.info("RIG LoadBalancerClient class={} spring-retry present={} interceptors={} retryFactory={} "
                        + "spring.cloud.loadbalancer.retry.enabled={}",
                lbc.getClass().getName(),
                ClassUtils.isPresent("org.springframework.retry.support.RetryTemplate", null),
                rest.getInterceptors().stream().map(i -> i.getClass().getName()).toArray(),
                ctx.getBeanNamesForType(org.springframework.cloud.client.loadbalancer.LoadBalancedRetryFactory.class).length == 0
                        ? "NONE" : ctx.getBean(org.springframework.cloud.client.loadbalancer.LoadBalancedRetryFactory.class).getClass().getName(),
                ctx.getEnvironment().getProperty("spring.cloud.loadbalancer.retry.enabled"));
        out = new BufferedWriter(new FileWriter(logFile, true), 1 << 16);
        java.io.File side = new java.io.File(new java.io.File(logFile).getAbsoluteFile().getParentFile(), "caller-retries.csv");
        boolean fresh = !side.exists() || side.length() == 0;
        retries = new BufferedWriter(new FileWriter(side, true), 1 << 14);
        if (fresh) {
            retries.write("send_epoch_ms,first_instance,final_instance,attempts\n");
        }
        ExecutorService pool = Executors.newFixedThreadPool(poolSize, r -> {
            Thread t = new Thread(r, "rig-req");
            t.setDaemon(true);
            return t;
        });
        ScheduledExecutorService sched = Executors.newScheduledThreadPool(2);
        sched.scheduleAtFixedRate(() -> pool.execute(this::oneRequest), 0, periodMs, TimeUnit.MILLISECONDS);
        sched.scheduleAtFixedRate(this::flush, 50, 50, TimeUnit.MILLISECONDS);
        // The load balancer is created lazily by the first request; describe it once it exists.
        sched.schedule(() -> RibbonProbe.describe(ctx.getBean(SpringClientFactory.class), serviceId), 5, TimeUnit.SECONDS);
        if (probeMs > 0) {
            RibbonProbe.start(ctx.getBean(SpringClientFactory.class), serviceId, probeMs, probeFile);
        }
        log.info("RIG caller started: period={}ms service={} log={}", periodMs, serviceId, logFile);
    }

    private synchronized void write(String line) {
        try {
            out.write(line);
            out.write('\n');
        } catch (IOException e) {
            log.error("log write failed", e);
        }
    }

    private synchronized void writeRetry(String line) {
        try {
            retries.write(line);
            retries.write('\n');
        } catch (IOException e) {
            log.error("retries write failed", e);
        }
    }

    private synchronized void flush() {
        try {
            out.flush();
            retries.flush();
        } catch (IOException e) {
            log.error("log flush failed", e);
        }
    }

    private void oneRequest() {
        long send = System.currentTimeMillis();
        long t0 = System.nanoTime();
        CHOSEN.get().clear();
        String outcome;
        try {
            ResponseEntity<String> r = rest.exchange("http://" + serviceId + "/ping", HttpMethod.GET,
                    CLOSE, String.class);
            outcome = r.getStatusCodeValue() == 200 ? "ok" : "http_" + r.getStatusCodeValue();
        } catch (HttpStatusCodeException e) {
            outcome = "http_" + e.getRawStatusCode();
        } catch (ResourceAccessException e) {
            Throwable c = e.getCause();
            if (c instanceof ConnectException) {
                outcome = "refused";
            } else if (c instanceof SocketTimeoutException) {
                outcome = "timeout";
            } else {
                outcome = "error_" + (c == null ? e : c).getClass().getSimpleName();
            }
        } catch (IllegalStateException e) {
            // RibbonLoadBalancerClient#execute: "No instances available for svc"
            outcome = e.getMessage() != null && e.getMessage().startsWith("No instances available")
                    ? "no_instance" : "error_IllegalStateException";
        } catch (Throwable e) {
            outcome = "error_" + e.getClass().getSimpleName();
        }
        java.util.List<String> attempts = CHOSEN.get();
        String chosen = attempts.isEmpty() ? null : attempts.get(0);
        long lat = (System.nanoTime() - t0) / 1_000_000L;
        write(send + "," + (chosen == null ? "" : chosen) + "," + outcome + "," + lat);
        if (attempts.size() > 1) {
            writeRetry(send + "," + chosen + "," + attempts.get(attempts.size() - 1) + "," + attempts.size());
        }
        attempts.clear();
    }
}
