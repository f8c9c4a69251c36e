package rig;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.ApplicationArguments;
import org.springframework.boot.ApplicationRunner;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.CompletionContext;
import org.springframework.cloud.client.loadbalancer.LoadBalanced;
import org.springframework.cloud.client.loadbalancer.LoadBalancerLifecycle;
import org.springframework.cloud.client.loadbalancer.Request;
import org.springframework.cloud.client.loadbalancer.RequestDataContext;
import org.springframework.cloud.client.loadbalancer.Response;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.http.client.reactive.ReactorClientHttpConnector;
import org.springframework.util.ClassUtils;
import org.springframework.web.reactive.function.client.ExchangeFilterFunction;
import org.springframework.web.reactive.function.client.WebClient;
import org.springframework.web.reactive.function.client.WebClientResponseException;
import reactor.netty.http.client.HttpClient;

/**
 * WebClient caller (2025.1.4): every period-ms, on a pool thread, one GET http://svc/ping through
 * a WebClient built from a {@code @LoadBalanced WebClient.Builder}, blocking on the answer for at
 * most 1000 ms (caller.block-timeout-ms; past it: timeout). Spring Cloud LoadBalancer's
 * ReactorLoadBalancerExchangeFilterFunction chooses the instance (round robin, Caffeine cache);
 * no retry: spring-retry is absent and the RetryableLoadBalancerExchangeFilterFunction is only
 * made when spring.cloud.loadbalancer.retry.enabled=true is set (logged at start: the builder's
 * filters). The connector is Reactor Netty with HttpClient.newConnection(): no connection pool,
 * a new TCP connection per request.
 *
 * Chosen instance: a LoadBalancerLifecycle bean gets onStartRequest (from the filter, with the
 * load balancer's Response<ServiceInstance>, before the request is sent) on a reactor thread; it
 * reads the request's X-Rig-Seq header from the RequestDataContext and files the instance under
 * it, and the calling thread takes it back when the call ends, so failures keep their instance.
 */
@SpringBootApplication
public class WebClientCallerApp implements ApplicationRunner {
    private static final Logger log = LoggerFactory.getLogger(WebClientCallerApp.class);
    static final String SEQ = "X-Rig-Seq";
    /** X-Rig-Seq -> instance id chosen by the load-balancer filter. */
    static final Map<String, String> CHOSEN = new ConcurrentHashMap<>();

    private final ApplicationContext ctx;
    private final WebClient.Builder builder;
    private final AtomicLong seq = new AtomicLong();
    private WebClient web;

    @Value("${caller.log-file:caller.csv}") String logFile;
    @Value("${caller.period-ms:50}") long periodMs;
    @Value("${caller.service-id:svc}") String serviceId;
    @Value("${caller.block-timeout-ms:1000}") long blockTimeoutMs;
    @Value("${caller.pool-size:64}") int poolSize;

    private RigLog out;

    public WebClientCallerApp(ApplicationContext ctx, @LoadBalanced WebClient.Builder builder) {
        this.ctx = ctx;
        this.builder = builder;
    }

    public static void main(String[] args) {
        SpringApplication.run(WebClientCallerApp.class, args);
    }

    /** The beans a WebClient application declares (in a class of their own: the app injects them). */
    @org.springframework.context.annotation.Configuration(proxyBeanMethods = false)
    static class Beans {
        @Bean
        @LoadBalanced
        WebClient.Builder loadBalancedWebClientBuilder() {
            return WebClient.builder().clientConnector(new ReactorClientHttpConnector(HttpClient.newConnection()));
        }

        @Bean
        LoadBalancerLifecycle<Object, Object, ServiceInstance> noteChosenInstance() {
            return new LoadBalancerLifecycle<>() {
                @Override
                public void onStart(Request<Object> request) {
                }

                @Override
                public void onStartRequest(Request<Object> request, Response<ServiceInstance> lbResponse) {
                    if (lbResponse == null || !lbResponse.hasServer() || !(request.getContext() instanceof RequestDataContext)) {
                        return;
                    }
                    RequestDataContext rc = (RequestDataContext) request.getContext();
                    String s = rc.getClientRequest().getHeaders().getFirst(SEQ);
                    if (s != null) {
                        CHOSEN.put(s, lbResponse.getServer().getInstanceId());
                    }
                }

                @Override
                public void onComplete(CompletionContext<Object, ServiceInstance, Object> completionContext) {
                }
            };
        }
    }

    @Override
    public void run(ApplicationArguments args) throws Exception {
        List<String> filters = new ArrayList<>();
        builder.filters(l -> l.forEach((ExchangeFilterFunction f) -> filters.add(f.getClass().getName())));
        web = builder.build();
        // The builder holds a DeferringLoadBalancerExchangeFilterFunction that resolves, at the first
        // request, the one LoadBalancedExchangeFilterFunction bean: name that bean too.
        List<String> lbFilters = new ArrayList<>();
        ctx.getBeansOfType(org.springframework.cloud.client.loadbalancer.reactive.LoadBalancedExchangeFilterFunction.class)
                .values().forEach(f -> lbFilters.add(f.getClass().getName()));
        log.info("RIG webclient @LoadBalanced builder filters={} LoadBalancedExchangeFilterFunction beans={} connector=ReactorClientHttpConnector(HttpClient.newConnection()) "
                        + "block-timeout={}ms spring-retry present={} spring.cloud.loadbalancer.retry.enabled={} lbCacheManager={}",
                filters, lbFilters, blockTimeoutMs, ClassUtils.isPresent("org.springframework.retry.support.RetryTemplate", null),
                ctx.getEnvironment().getProperty("spring.cloud.loadbalancer.retry.enabled"),
                ctx.getBeanNamesForType(org.springframework.cloud.loadbalancer.cache.LoadBalancerCacheManager.class).length == 0
                        ? "NONE" : ctx.getBean(org.springframework.cloud.loadbalancer.cache.LoadBalancerCacheManager.class).getClass().getName());
        ExecutorService pool = Executors.newFixedThreadPool(poolSize, r -> {
            Thread t = new Thread(r, "rig-req");
            t.setDaemon(true);
            return t;
        });
        ScheduledExecutorService sched = Executors.newScheduledThreadPool(2);
        out = new RigLog(logFile, sched);
        sched.scheduleAtFixedRate(() -> pool.execute(this::oneRequest), 0, periodMs, TimeUnit.MILLISECONDS);
        log.info("RIG caller started: period={}ms service={} log={}", periodMs, serviceId, logFile);
    }

    private void oneRequest() {
        long send = System.currentTimeMillis();
        long t0 = System.nanoTime();
        String s = Long.toString(seq.incrementAndGet());
        String outcome;
        try {
            web.get().uri("http://" + serviceId + "/ping").header(SEQ, s).retrieve().toEntity(String.class)
                    .block(Duration.ofMillis(blockTimeoutMs));
            outcome = "ok";
        } catch (WebClientResponseException e) {
            // ReactorLoadBalancerExchangeFilterFunction answers 503 itself when no instance is available
            int code = e.getStatusCode().value();
            outcome = code == 503 && !CHOSEN.containsKey(s) ? "no_instance" : "http_" + code;
        } catch (IllegalStateException e) {
            // Mono#block: "Timeout on blocking read for N MILLISECONDS"
            outcome = e.getMessage() != null && e.getMessage().startsWith("Timeout on blocking read")
                    ? "timeout" : RigLog.failure(e);
        } catch (Throwable e) {
            outcome = RigLog.failure(e);
        }
        String chosen = CHOSEN.remove(s);
        long lat = (System.nanoTime() - t0) / 1_000_000L;
        out.write(send, chosen, outcome, lat);
    }
}
